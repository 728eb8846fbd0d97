"""A PyTorch-style program: a 2-layer graph convolutional network (Kipf and Welling's
GCN) on a small random graph, its adjacency a sparse COO tensor normalised as
D^-1/2 (A + I) D^-1/2, trained for 20 steps of Adam on node labels. Prints the losses
and the final accuracy as JSON.
tolerance: 1e-5
"""

import json

import torch
import torch.nn.functional as F

torch.manual_seed(0)
nodes, features, hidden, classes = 40, 8, 16, 3
edges = torch.randint(0, nodes, (2, 120))
edges = torch.cat([edges, edges.flip(0), torch.arange(nodes).repeat(2, 1)], 1)  # undirected, self-loops
adjacency = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (nodes, nodes)).coalesce()
adjacency = torch.sparse_coo_tensor(adjacency.indices(), torch.ones(adjacency._nnz()), (nodes, nodes))
degree = torch.sparse.sum(adjacency, 1).to_dense()
scale = degree.pow(-0.5)
rows, cols = adjacency._indices()
normalized = torch.sparse_coo_tensor(adjacency._indices(), scale[rows] * scale[cols], (nodes, nodes)).coalesce()

x = torch.randn(nodes, features)
labels = torch.randint(0, classes, (nodes,))


class GCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(features, hidden)
        self.second = torch.nn.Linear(hidden, classes)

    def forward(self, adjacency, x):
        h = F.relu(torch.sparse.mm(adjacency, self.first(x)))
        return adjacency @ self.second(h)


model = GCN()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for _ in range(20):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(normalized, x), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
accuracy = (model(normalized, x).argmax(1) == labels).float().mean().item()
print(json.dumps({"losses": losses, "accuracy": accuracy, "nnz": normalized._nnz()}))
