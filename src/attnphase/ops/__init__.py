"""The model's operations, written once per array library (docs/theory.md §1, §7.1, §8).

Fields h in R^{L x r} (rows h_l; h = x~ Q/sqrt(d) at finite d, §1) give the logits Z = h Pi h^T
and the attention S(h) = softmax_row(Z): Pi = I for tied query and key (Z = h h^T); for untied
fields h = (h_Q, h_K), the query columns then as many key columns (docs/theory-untied.md),
Pi pairs query column a with key column a + key_start and Z = h_Q h_K^T. `key_start` is 0 when
tied and r/2 when untied (`attnphase.params.key_start_of`). The target is
T(h*) = (1 - omega) S(h*) + omega A (eq. 1/16). The per-sample loss is
    g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T)
with L x L matrices K (symmetric), Cm and a constant c: at finite d K = x~ x~^T/d,
Cm = y x~^T/d, c = |y|^2/(2d) (§8), and the empirical risk is sum_mu g_mu + the ridge (§1); in
the channel (§7.1) K = sigma^2 I, Cm = sigma^2 T(h*), c = sigma^2/2 |T|^2, so that
g = sigma^2/2 |S(h) - T(h*)|^2.

g separates over the rows of S, g = c + sum_i phi_i(s_i), phi_i(s) = -Cm_i.s + s K s/2, so
    dg/dZ = P,        P_ik = S_ik (U_ik - sum_j S_ij U_ij),   U = S K - Cm,
    grad_h g = P h Pi^T + P^T h Pi                              ((P + P^T) h when tied),
    d2g/dz_i^2 = J_i K J_i + diag(p_i) - s_i p_i^T - p_i s_i^T,   J_i = diag(s_i) - s_i s_i^T,
and the Hessian in h adds the curvature of Z, P_ab Pi_cd + P_ba Pi_dc at (a c, b d).

- `tensor`: torch, batched over leading axes, any device, differentiable; also the fields and
  their adjoint (the simulations, GAMP, the landscape probe, the torch prox);
- `array`: numpy (the QMC channel, the GAMP trace, the baseline);
- `compiled`: numba, one sample into the caller's buffers (the CPU prox kernel);
- `softmax2`: the closed forms of L = 2, r = 1 (the exact channel and its 2x2 prox).
"""
