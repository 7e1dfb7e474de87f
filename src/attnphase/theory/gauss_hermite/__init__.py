"""The exact L=2 engine: closed-form 2x2 softmax, Gauss-Hermite channel, global prox."""
