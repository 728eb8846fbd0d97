"""Three ranks with FSDP (batch 4 each, one unit per Linear) end with the weights of
one process with batch 12; each rank holds a third of the parameters and Adam state."""
import ember
import ember.distributed as dist
import ember.nn.functional as F
from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
from ember.distributed.fsdp.wrap import ModuleWrapPolicy

dist.init_process_group()
rank = dist.get_rank()
ember.manual_seed(0)
x, y = ember.randn(3, 12, 5, dtype=ember.float64), ember.randint(0, 3, (3, 12))


def model_and_optimizer(wrap=None):
    ember.manual_seed(1)
    model = ember.nn.Sequential(ember.nn.Linear(5, 16), ember.nn.Tanh(),
                                ember.nn.Linear(16, 3)).double()
    model = wrap(model) if wrap else model
    return model, ember.optim.Adam(model.parameters(), lr=0.05)


def train(net, optimizer, rows):  # 3 steps
    for step in range(3):
        optimizer.zero_grad()
        F.cross_entropy(net(x[step, rows]), y[step, rows]).backward()
        optimizer.step()


big, big_opt = model_and_optimizer()
train(big, big_opt, slice(0, 12))  # one process, batch 12
policy = ModuleWrapPolicy({ember.nn.Linear})  # one unit per Linear
sharded, opt = model_and_optimizer(lambda m: FSDP(m, auto_wrap_policy=policy))
train(sharded, opt, slice(4 * rank, 4 * rank + 4))  # this rank's 4 samples
full = sharded.state_dict()  # gathered: every parameter whole, the plain model's names
gap = max((full[k] - v).abs().max().item() for k, v in big.state_dict().items())
held, total = (sum(p.numel() for p in m.parameters()) for m in (sharded, big))
state = sum(s["exp_avg"].numel() + s["exp_avg_sq"].numel() for s in opt.state.values())
close = "1e-12" if gap < 1e-12 else gap
line = (f"rank {rank}: weights equal the big batch's to {close}; "
        f"holds {held} of {total} parameters, {state} Adam elements")
print(line + "\n", end="", flush=True)
