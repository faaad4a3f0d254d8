// A/A control for the harness: a SPEC §4 kernel file whose kernel is torch's own matmul.
// Measured against the torch.matmul baseline it must come out "same" (speedup ~1.0 inside the
// run-to-run spread): a check that the harness treats a set and a baseline alike. It is also a
// fast set, so a full-grid run of it times the harness rather than a slow kernel.
#include <torch/extension.h>

void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {
    at::matmul_out(c, a, b);
}
