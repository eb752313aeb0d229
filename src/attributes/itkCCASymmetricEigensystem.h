/*=========================================================================
 *
 *  Copyright NumFOCUS
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         http://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#ifndef itkCCASymmetricEigensystem_h
#define itkCCASymmetricEigensystem_h

#include <array>
#include <cmath>

// An ITK-free port of EISPACK's rs (eigenvalues and eigenvectors of a real symmetric matrix) as VXL's v3p
// ships it (v3p/netlib/eispack/rs.c, tred2.c, tql2.c, pythag.c: netlib EISPACK, public domain, through
// f2c), i.e. what v3p_netlib_rs_ and so vnl_symmetric_eigensystem compute, for n <= 3 and with eigenvectors
// wanted (rs then calls tred2 and tql2; tred1/tql1 serve only the eigenvalues-only path). The operations are
// those of the f2c code, in its order, with f2c's abs/min/max macros and libf2c's d_sign (which differ from
// std::fabs/fmin/fmax/copysign on -0.0 and NaN), so that the results are the same bits. Indices are 1-based
// as in the Fortran. One deliberate difference: for NaN input tql2's search for a small subdiagonal element
// runs past the end (m = n + 1) and the f2c code then reads and writes one element beyond d, e and z; here m
// stays at n, so NaN input gives NaN output without touching memory out of bounds.
// The bits match v3p_netlib_rs_ as long as both are compiled without floating-point contraction (FMA) or
// -ffast-math; with an FMA-capable -march, GCC's default -ffp-contract=fast in GNU modes may fuse a*b+c.

namespace itk
{
namespace cca
{
namespace rs_detail
{
constexpr long kMaxN = 3;

/** f2c's abs macro: ((x) >= 0 ? (x) : -(x)); keeps -0.0 and flips NaN's sign bit, unlike std::fabs. */
inline double
F2cAbs(double x)
{
  return x >= 0 ? x : -x;
}

/** libf2c's d_sign(a, b): |a| (f2c style) with the sign of b, where b = -0.0 counts as positive. */
inline double
F2cSign(double a, double b)
{
  const double x = (a >= 0 ? a : -a);
  return (b >= 0 ? x : -x);
}

/** EISPACK pythag: sqrt(a*a + b*b) without overflow or destructive underflow. */
inline double
Pythag(double a, double b)
{
  const double d2 = F2cAbs(a);
  const double d3 = F2cAbs(b);
  double       p = (d2 >= d3 ? d2 : d3); // f2c max
  if (p == 0.)
  {
    return p;
  }
  double d1 = (d2 <= d3 ? d2 : d3) / p; // f2c min
  double r = d1 * d1;
  for (;;)
  {
    const double t = r + 4.;
    if (t == 4. || t != t) // t != t (NaN, from inf or NaN input): EISPACK would loop forever
    {
      return p;
    }
    const double s = r / t;
    const double u = s * 2. + 1.;
    p = u * p;
    d1 = s / u;
    r = d1 * d1 * r;
  }
}
} // namespace rs_detail

/** EISPACK rs (tred2 + tql2) as v3p_netlib_rs_ computes it, for n <= 3: `a` is the n x n matrix in
 * column-major order (only the lower triangle is read), `w` receives the eigenvalues ascending, `z` the
 * eigenvectors column-major (z[c*n + r] is row r of eigenvector c); returns ierr (0, or l when the l-th
 * eigenvalue did not converge in 30 iterations, in which case, as in EISPACK, nothing is sorted). */
inline long
SymmetricEigensystemRS(long n, const double * a, double * w, double * z)
{
  using rs_detail::F2cAbs;
  using rs_detail::F2cSign;
  using rs_detail::Pythag;
  if (n < 1 || n > rs_detail::kMaxN)
  {
    return n < 1 ? 0 : 10 * n; // rs's code for n > nm (here nm = 3); n < 1 has nothing to compute
  }
  // 1-based scratch: d = w, e = fv1, Z(r, c) = zz[c][r]; A(r, c) = a[(c - 1) * n + r - 1].
  double     d[rs_detail::kMaxN + 1] = {};
  double     e[rs_detail::kMaxN + 1] = {};
  double     zz[rs_detail::kMaxN + 1][rs_detail::kMaxN + 1] = {};
  const auto A = [a, n](long r, long c) { return a[(c - 1) * n + (r - 1)]; };
  const auto Z = [&zz](long r, long c) -> double & { return zz[c][r]; };
  double     f = 0., g = 0., h = 0., hh = 0., scale = 0.;
  long       i = 0, j = 0, k = 0, l = 0;

  // ---- tred2: Householder reduction to tridiagonal form, accumulating the transformations ----
  for (i = 1; i <= n; ++i)
  {
    for (j = i; j <= n; ++j)
    {
      Z(j, i) = A(j, i);
    }
    d[i] = A(n, i);
  }
  if (n != 1)
  {
    for (long ii = 2; ii <= n; ++ii)
    {
      i = n + 2 - ii;
      l = i - 1;
      h = 0.;
      scale = 0.;
      bool skip = (l < 2); // "go to 130"
      if (!skip)
      {
        for (k = 1; k <= l; ++k)
        {
          scale += F2cAbs(d[k]);
        }
        skip = !(scale != 0.);
      }
      if (skip)
      { // 130
        e[i] = d[l];
        for (j = 1; j <= l; ++j)
        {
          d[j] = Z(l, j);
          Z(i, j) = 0.;
          Z(j, i) = 0.;
        }
      }
      else
      { // 140
        for (k = 1; k <= l; ++k)
        {
          d[k] /= scale;
          h += d[k] * d[k];
        }
        f = d[l];
        g = -F2cSign(std::sqrt(h), f);
        e[i] = scale * g;
        h -= f * g;
        d[l] = f - g;
        for (j = 1; j <= l; ++j) // form a*u
        {
          e[j] = 0.;
        }
        for (j = 1; j <= l; ++j)
        {
          f = d[j];
          Z(j, i) = f;
          g = e[j] + Z(j, j) * f;
          for (k = j + 1; k <= l; ++k)
          {
            g += Z(k, j) * d[k];
            e[k] += Z(k, j) * f;
          }
          e[j] = g;
        }
        f = 0.; // form p
        for (j = 1; j <= l; ++j)
        {
          e[j] /= h;
          f += e[j] * d[j];
        }
        hh = f / (h + h);
        for (j = 1; j <= l; ++j) // form q
        {
          e[j] -= hh * d[j];
        }
        for (j = 1; j <= l; ++j) // form reduced a
        {
          f = d[j];
          g = e[j];
          for (k = j; k <= l; ++k)
          {
            Z(k, j) = Z(k, j) - f * e[k] - g * d[k];
          }
          d[j] = Z(l, j);
          Z(i, j) = 0.;
        }
      }
      d[i] = h; // 290
    }
    for (i = 2; i <= n; ++i) // accumulation of transformation matrices
    {
      l = i - 1;
      Z(n, l) = Z(l, l);
      Z(l, l) = 1.;
      h = d[i];
      if (!(h == 0.))
      {
        for (k = 1; k <= l; ++k)
        {
          d[k] = Z(k, i) / h;
        }
        for (j = 1; j <= l; ++j)
        {
          g = 0.;
          for (k = 1; k <= l; ++k)
          {
            g += Z(k, i) * Z(k, j);
          }
          for (k = 1; k <= l; ++k)
          {
            Z(k, j) -= g * d[k];
          }
        }
      }
      for (k = 1; k <= l; ++k) // 380
      {
        Z(k, i) = 0.;
      }
    }
  }
  for (i = 1; i <= n; ++i) // 510
  {
    d[i] = Z(n, i);
    Z(n, i) = 0.;
  }
  Z(n, n) = 1.;
  e[1] = 0.;

  // ---- tql2: QL with implicit shifts on the tridiagonal matrix, then sorting ----
  long ierr = 0;
  if (n != 1)
  {
    for (i = 2; i <= n; ++i)
    {
      e[i - 1] = e[i];
    }
    f = 0.;
    double tst1 = 0.;
    double tst2 = 0.;
    e[n] = 0.;
    for (l = 1; l <= n && ierr == 0; ++l)
    {
      j = 0;
      h = F2cAbs(d[l]) + F2cAbs(e[l]);
      if (tst1 < h)
      {
        tst1 = h;
      }
      long m = l; // look for a small subdiagonal element
      for (; m < n; ++m)
      {
        tst2 = tst1 + F2cAbs(e[m]);
        if (tst2 == tst1)
        {
          break;
        }
      } // m == n here also when e(n) failed the test (NaN only): f2c would go on to m = n + 1
      if (m != l)
      {
        do // 130
        {
          if (j == 30)
          {
            ierr = l;
            break;
          }
          ++j;
          const long l1 = l + 1; // form shift
          const long l2 = l1 + 1;
          g = d[l];
          double p = (d[l1] - g) / (e[l] * 2.);
          double r = Pythag(p, 1.);
          d[l] = e[l] / (p + F2cSign(r, p));
          d[l1] = e[l] * (p + F2cSign(r, p));
          const double dl1 = d[l1];
          h = g - d[l];
          for (i = l2; i <= n; ++i)
          {
            d[i] -= h;
          }
          f += h;   // 145
          p = d[m]; // ql transformation
          double       c = 1.;
          double       c2 = c;
          double       c3 = c;
          const double el1 = e[l1];
          double       s = 0.;
          double       s2 = s;
          for (long ii = 1; ii <= m - l; ++ii)
          {
            c3 = c2;
            c2 = c;
            s2 = s;
            i = m - ii;
            g = c * e[i];
            h = c * p;
            r = Pythag(p, e[i]);
            e[i + 1] = s * r;
            s = e[i] / r;
            c = p / r;
            p = c * d[i] - s * g;
            d[i + 1] = h + s * (c * g + s * d[i]);
            for (k = 1; k <= n; ++k) // form vector
            {
              h = Z(k, i + 1);
              Z(k, i + 1) = s * Z(k, i) + c * h;
              Z(k, i) = c * Z(k, i) - s * h;
            }
          }
          p = -s * s2 * c3 * el1 * e[l] / dl1;
          e[l] = s * p;
          d[l] = c * p;
          tst2 = tst1 + F2cAbs(e[l]);
        } while (tst2 > tst1);
      }
      if (ierr == 0)
      {
        d[l] += f; // 220
      }
    }
    for (long ii = 2; ii <= n && ierr == 0; ++ii) // order eigenvalues and eigenvectors
    {
      i = ii - 1;
      k = i;
      double p = d[i];
      for (j = ii; j <= n; ++j)
      {
        if (!(d[j] >= p))
        {
          k = j;
          p = d[j];
        }
      }
      if (k != i)
      {
        d[k] = d[i];
        d[i] = p;
        for (j = 1; j <= n; ++j)
        {
          p = Z(j, i);
          Z(j, i) = Z(j, k);
          Z(j, k) = p;
        }
      }
    }
  }
  for (i = 1; i <= n; ++i)
  {
    w[i - 1] = d[i];
    for (j = 1; j <= n; ++j)
    {
      z[(i - 1) * n + (j - 1)] = Z(j, i);
    }
  }
  return ierr;
}

/** vnl_symmetric_eigensystem's result, the way it computes it (EISPACK rs on the same numbers, so the
 * same bits), without its nine heap allocations per matrix, which dominated the LabelMap's attributes:
 * eigenvalues ascending, eigenvectors as the rows of `vectorsAsRows` (vnl's V transposed). */
template <unsigned int D>
void
SymmetricEigensystem(const std::array<std::array<double, D>, D> & m, std::array<double, 3> & values, std::array<std::array<double, D>, D> & vectorsAsRows)
{
  double a[D * D]; // rs reads the lower triangle column-major; symmetric, so either order
  for (unsigned int i = 0; i < D; ++i)
  {
    for (unsigned int j = 0; j < D; ++j)
    {
      a[j * D + i] = m[i][j];
    }
  }
  double w[D];
  double z[D * D];
  // ierr (no convergence in 30 iterations) is ignored, as vnl_symmetric_eigensystem's constructor does.
  SymmetricEigensystemRS(D, a, w, z);
  for (unsigned int c = 0; c < D; ++c)
  {
    values[c] = w[c];
    for (unsigned int r = 0; r < D; ++r)
    {
      vectorsAsRows[c][r] = z[c * D + r]; // vnl: V(r, c) = z[c·n + r]
    }
  }
}

} // namespace cca
} // namespace itk

#endif // itkCCASymmetricEigensystem_h
