"""A PyTorch program in the style of the pre-0.4 tutorials still copied today: typed
tensor constructors, ``Variable``, ``isinstance`` on typed classes, ``.type(...)`` and
``Tensor.new``. Prints the losses and the learned weights as JSON.
tolerance: 1e-6
"""

import json

import torch
from torch.autograd import Variable

torch.manual_seed(0)
x = Variable(torch.FloatTensor([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
y = Variable(torch.LongTensor([1, 1, 0, 0]))
w = Variable(torch.randn(2, 2).type(torch.FloatTensor), requires_grad=True)
b = Variable(torch.zeros(2), requires_grad=True)
assert isinstance(x, torch.FloatTensor) and isinstance(y, torch.LongTensor) and not isinstance(y, torch.FloatTensor)
losses = []
for _ in range(20):
    loss = torch.nn.functional.cross_entropy(x.mm(w) + b, y)
    loss.backward()
    for p in (w, b):
        p.data -= 0.5 * p.grad.data
        p.grad.data.zero_()
    losses.append(loss.item())
scratch = w.new(3, 2).fill_(3.0)
print(json.dumps({"losses": losses, "w": w.tolist(), "b": b.tolist(), "new": scratch.tolist(),
                  "as_double": w.type("torch.DoubleTensor").sum().item()}))
