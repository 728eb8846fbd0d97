"""A PyTorch-style program: Jacobian-vector products of a small MLP with forward-mode AD
(torch.autograd.forward_ad's dual tensors, the forward-AD tutorial's pattern), checked
against torch.func.jvp and the full Jacobian from torch.func.jacfwd. Prints the products
as JSON.
tolerance: 1e-9
"""

import json

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
x = torch.randn(4, 5, dtype=torch.float64)
v = torch.randn(4, 5, dtype=torch.float64)


def loss_of(inputs):
    return F.log_softmax(model(inputs), dim=1)


with fwAD.dual_level():
    dual = fwAD.make_dual(x, v)
    out = loss_of(dual)
    primal, tangent = fwAD.unpack_dual(out)

_, func_tangent = torch.func.jvp(loss_of, (x,), (v,))
jacobian = torch.func.jacfwd(lambda row: loss_of(row[None])[0])(x[0])
print(json.dumps({
    "primal": primal.tolist(),
    "jvp": tangent.tolist(),
    "func_jvp": func_tangent.tolist(),
    "jacobian_row0": jacobian.tolist(),
    "jacobian_times_v": (jacobian @ v[0]).tolist(),
}))
