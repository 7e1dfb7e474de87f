"""The exact L=2 engine: the Gauss-Hermite channel on the closed forms of `attnphase.ops.softmax2`
and the 2x2 prox of `attnphase.prox.closed_form`."""
