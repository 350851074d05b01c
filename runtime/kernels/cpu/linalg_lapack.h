// LAPACK's Fortran entry points in OpenBLAS (Debian's openblas ships no lapack.h beside cblas.h),
// overloaded on float/double so each kernel is written once, and the batch helpers the linalg
// kernels share. LAPACK matrices are column-major and its INTEGER is 32-bit (OPENBLAS_USE64BITINT
// is off). Character arguments take gfortran's hidden length arguments, passed explicitly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/array_ref.h"
#include "runtime/core/tensor_base.h"

extern "C" {
void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b, const int* ldb, int* info);
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv, float* b,
             const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void sgels_(const char* trans, const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
            const int* ldb, float* work, const int* lwork, int* info, size_t);
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
            const int* ldb, double* work, const int* lwork, int* info, size_t);
void sgelsy_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, int* jpvt,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             int* jpvt, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void sgelss_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
}

namespace kiln {
namespace cpu {
namespace lapack {

inline void gesv(int n, int nrhs, float* a, int* ipiv, float* b, int* info) { sgesv_(&n, &nrhs, a, &n, ipiv, b, &n, info); }
inline void gesv(int n, int nrhs, double* a, int* ipiv, double* b, int* info) { dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, info); }
inline void getrf(int n, float* a, int* ipiv, int* info) { sgetrf_(&n, &n, a, &n, ipiv, info); }
inline void getrf(int n, double* a, int* ipiv, int* info) { dgetrf_(&n, &n, a, &n, ipiv, info); }
// (m x n) LU, leading dimension m.
inline void getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
inline void getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
inline void getrs(char trans, int n, int nrhs, const float* a, const int* ipiv, float* b, int* info) {
  sgetrs_(&trans, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
}
inline void getrs(char trans, int n, int nrhs, const double* a, const int* ipiv, double* b, int* info) {
  dgetrs_(&trans, &n, &nrhs, a, &n, ipiv, b, &n, info, 1);
}
// Least squares: a is m x n (lda m), b is ldb x nrhs; lwork -1 asks for the work size.
inline void gels(int m, int n, int nrhs, float* a, float* b, int ldb, float* work, int lwork, int* info) {
  const char t = 'N';
  sgels_(&t, &m, &n, &nrhs, a, &m, b, &ldb, work, &lwork, info, 1);
}
inline void gels(int m, int n, int nrhs, double* a, double* b, int ldb, double* work, int lwork, int* info) {
  const char t = 'N';
  dgels_(&t, &m, &n, &nrhs, a, &m, b, &ldb, work, &lwork, info, 1);
}
inline void gelsy(int m, int n, int nrhs, float* a, float* b, int ldb, int* jpvt, float rcond, int* rank, float* work,
                  int lwork, int* info) {
  sgelsy_(&m, &n, &nrhs, a, &m, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
inline void gelsy(int m, int n, int nrhs, double* a, double* b, int ldb, int* jpvt, double rcond, int* rank,
                  double* work, int lwork, int* info) {
  dgelsy_(&m, &n, &nrhs, a, &m, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
inline void gelsd(int m, int n, int nrhs, float* a, float* b, int ldb, float* s, float rcond, int* rank, float* work,
                  int lwork, int* iwork, int* info) {
  sgelsd_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
inline void gelsd(int m, int n, int nrhs, double* a, double* b, int ldb, double* s, double rcond, int* rank,
                  double* work, int lwork, int* iwork, int* info) {
  dgelsd_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
inline void gelss(int m, int n, int nrhs, float* a, float* b, int ldb, float* s, float rcond, int* rank, float* work,
                  int lwork, int* info) {
  sgelss_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
inline void gelss(int m, int n, int nrhs, double* a, double* b, int ldb, double* s, double rcond, int* rank,
                  double* work, int lwork, int* info) {
  dgelss_(&m, &n, &nrhs, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
inline void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }
inline void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
inline void syevd(char jobz, char uplo, int n, float* a, float* w, float* work, int lwork, int* iwork, int liwork,
                  int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, double* a, double* w, double* work, int lwork, int* iwork, int liwork,
                  int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void gesdd(char jobz, int m, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt, float* work,
                  int lwork, int* iwork, int* info) {
  sgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt,
                  double* work, int lwork, int* iwork, int* info) {
  dgesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void geqrf(int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &m, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, float* a, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, double* a, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&m, &n, &k, a, &m, tau, work, &lwork, info);
}

}  // namespace lapack

// torch's name of a dtype in linalg messages ("Expected a floating point ... Got Long").
const char* torch_dtype_name(ScalarType t);
// torch's input checks: at least 2 dims, float32/float64 (`arg` names the tensor: "A", "B").
void check_linalg_input(const TensorBase& t, const char* op, const char* arg = "A");
// ... and square matrices.
void check_square(const TensorBase& t, const char* op, const char* arg = "A");
// `t`'s leading (batch) dims.
DimVector batch_shape(const TensorBase& t);
int64_t batch_numel(IntArrayRef batch);
// `t` broadcast to batch + its last two dims, contiguous (matrix b starts at b * rows * cols).
TensorBase batched_contiguous(const TensorBase& t, IntArrayRef batch, const char* op);
// A view of `t` with its last two dims swapped.
TensorBase transpose_last(const TensorBase& t);
// A contiguous tensor `t` seen with `sizes` (same numel).
TensorBase view_as_shape(const TensorBase& t, IntArrayRef sizes);
// "(Batch element 3): " for a batched input (torch's prefix of a batch's error), else "".
std::string batch_prefix(const TensorBase& input, int64_t b);

// A rows x cols row-major matrix to a column-major one and back (LAPACK's layout).
template <typename T>
void to_colmajor(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
}
template <typename T>
void from_colmajor(const T* src, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[j * rows + i];
}

}  // namespace cpu
}  // namespace kiln
