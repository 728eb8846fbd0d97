"""Two ranks with DDP (batch 4 each) end with the weights of one process with batch 8."""
import ember
import ember.distributed as dist
import ember.nn.functional as F
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank = dist.get_rank()
ember.manual_seed(0)
# 3 steps of 8 samples
x, y = ember.randn(3, 8, 5, dtype=ember.float64), ember.randint(0, 3, (3, 8))


def model_and_optimizer():
    ember.manual_seed(1)
    model = ember.nn.Sequential(ember.nn.Linear(5, 16), ember.nn.Tanh(),
                                ember.nn.Linear(16, 3)).double()
    return model, ember.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)


def train(net, optimizer, rows):
    for step in range(3):
        optimizer.zero_grad()
        F.cross_entropy(net(x[step, rows]), y[step, rows]).backward()
        optimizer.step()


big, big_opt = model_and_optimizer()
train(big, big_opt, slice(0, 8))  # one process, batch 8
model, opt = model_and_optimizer()
train(DDP(model), opt, slice(4 * rank, 4 * rank + 4))  # this rank's 4 samples
gap = max((a - b).abs().max().item()
          for a, b in zip(model.parameters(), big.parameters()))
print(f"rank {rank}: weights equal the big batch's to "
      f"{'1e-12' if gap < 1e-12 else gap}\n", end="", flush=True)
