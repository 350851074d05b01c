// The Hurwitz zeta function zeta(s, q) = sum_{k >= 0} (q + k)^-s in double: torch.special.zeta's
// kernel and polygamma's for n >= 2 (zeta_op.cc, polygamma_op.cc).
#pragma once

namespace kiln {
namespace cpu {

// Cephes' zeta (which torch's is), with its domain: inf at s = 1, NaN below 1 and for NaN q; at q
// zero or a negative integer a pole (inf, NaN s too); for other q below 0, NaN unless s is an integer.
double hurwitz_zeta(double s, double q);

}  // namespace cpu
}  // namespace kiln
