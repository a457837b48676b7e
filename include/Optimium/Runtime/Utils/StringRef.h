// Non-owning view of a string (C++14 has no std::string_view). Converts implicitly to std::string.
#pragma once

#include <cstring>
#include <ostream>
#include <string>

namespace optimium {
namespace runtime {

class StringRef {
public:
  StringRef() : Data(""), Length(0) {}
  StringRef(const char *Str) : Data(Str ? Str : ""), Length(Str ? std::strlen(Str) : 0) {}
  StringRef(const char *Str, size_t Len) : Data(Str), Length(Len) {}
  StringRef(const std::string &Str) : Data(Str.data()), Length(Str.size()) {}

  const char *data() const { return Data; }
  size_t size() const { return Length; }
  bool empty() const { return Length == 0; }
  std::string str() const { return std::string(Data, Length); }
  operator std::string() const { return str(); }

  const char *begin() const { return Data; }
  const char *end() const { return Data + Length; }
  char operator[](size_t I) const { return Data[I]; }

  int compare(StringRef Other) const {
    size_t N = Length < Other.Length ? Length : Other.Length;
    int R = N ? std::memcmp(Data, Other.Data, N) : 0;
    if (R != 0)
      return R;
    return Length < Other.Length ? -1 : (Length > Other.Length ? 1 : 0);
  }

  friend bool operator==(StringRef A, StringRef B) { return A.compare(B) == 0; }
  friend bool operator!=(StringRef A, StringRef B) { return A.compare(B) != 0; }
  friend bool operator<(StringRef A, StringRef B) { return A.compare(B) < 0; }
  friend std::ostream &operator<<(std::ostream &OS, StringRef S) {
    return OS.write(S.Data, static_cast<std::streamsize>(S.Length));
  }

private:
  const char *Data;
  size_t Length;
};

} // namespace runtime
} // namespace optimium
