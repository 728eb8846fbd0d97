"""A PyTorch program that quantizes a model with torch's documented paths
(torch.ao.quantization.quantize_dynamic, torch.ao.nn.quantized.dynamic, torch.qint8,
torch.quantize_per_tensor). Prints the float and int8 outputs as JSON.
tolerance: 1e-5
"""

import json

import torch
import torch.ao.nn.quantized.dynamic as nnqd
from torch.ao.quantization import quantize_dynamic

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
x = torch.randn(5, 8)
quantized = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
assert isinstance(quantized[0], nnqd.Linear)
q = torch.quantize_per_tensor(x, scale=0.05, zero_point=3, dtype=torch.quint8)
print(json.dumps({"float": model(x).tolist(), "int8": quantized(x).tolist(),
                  "q_int_repr": q.int_repr().tolist(), "dequantized": q.dequantize().tolist()}))
