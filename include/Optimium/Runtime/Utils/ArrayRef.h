// Non-owning view of a contiguous array. The referenced storage must outlive the view.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace optimium {
namespace runtime {

template <typename T> class ArrayRef {
public:
  using value_type = T;
  using iterator = const T *;
  using const_iterator = const T *;

  ArrayRef() : Data(nullptr), Length(0) {}
  ArrayRef(const T &One) : Data(&One), Length(1) {}
  ArrayRef(const T *Ptr, size_t Len) : Data(Ptr), Length(Len) {}
  ArrayRef(const T *Begin, const T *End) : Data(Begin), Length(static_cast<size_t>(End - Begin)) {}
  template <typename A> ArrayRef(const std::vector<T, A> &V) : Data(V.data()), Length(V.size()) {}
  template <size_t N> ArrayRef(const std::array<T, N> &A) : Data(A.data()), Length(N) {}
  template <size_t N> ArrayRef(const T (&A)[N]) : Data(A), Length(N) {}
  // Only valid while the initializer list lives (i.e. within the full expression), which is what
  // call sites like infer({X}) need; GCC's -Winit-list-lifetime flags it anyway, so hush it here.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ArrayRef(const std::initializer_list<T> &L) : Data(L.begin()), Length(L.size()) {}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#pragma GCC diagnostic pop
#endif

  const T *data() const { return Data; }
  size_t size() const { return Length; }
  bool empty() const { return Length == 0; }
  const T *begin() const { return Data; }
  const T *end() const { return Data + Length; }
  const T &front() const { return Data[0]; }
  const T &back() const { return Data[Length - 1]; }
  const T &operator[](size_t I) const { return Data[I]; }
  const T &at(size_t I) const {
    if (I >= Length)
      throw std::out_of_range("ArrayRef index out of range");
    return Data[I];
  }
  std::vector<T> vec() const { return std::vector<T>(Data, Data + Length); }
  operator std::vector<T>() const { return vec(); }

private:
  const T *Data;
  size_t Length;
};

template <typename T, typename A> ArrayRef<T> make_array(const std::vector<T, A> &V) { return ArrayRef<T>(V); }
template <typename T, size_t N> ArrayRef<T> make_array(const std::array<T, N> &A) { return ArrayRef<T>(A); }
template <typename T, size_t N> ArrayRef<T> make_array(const T (&A)[N]) { return ArrayRef<T>(A); }
template <typename T> ArrayRef<T> make_array(const T *Ptr, size_t Len) { return ArrayRef<T>(Ptr, Len); }
template <typename T> ArrayRef<T> make_array(const T &One) { return ArrayRef<T>(One); }

} // namespace runtime
} // namespace optimium
