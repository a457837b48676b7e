// getVersion() is the library's version and matches the headers'.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "Optimium/Runtime/Utils/StreamHelper.h"
#include "Optimium/Runtime/Version.h"

namespace rt = optimium::runtime;

TEST(VersionTest, MatchesHeaders) {
  const rt::Version V = rt::getVersion();
  const rt::Version Headers = OPTIMIUM_RT_CURRENT_VERSION;
  EXPECT_TRUE(V == Headers);
  EXPECT_FALSE(V != Headers);
  EXPECT_EQ(V.Major, 4u);
  EXPECT_EQ(V.Minor, 4u);
  EXPECT_EQ(V.Patch, 0u);
  ASSERT_NE(V.Tag, nullptr);
  EXPECT_STREQ(V.Tag, OPTIMIUM_RT_VERSION_TAG);
  ASSERT_NE(V.CommitID, nullptr);
  EXPECT_GT(std::strlen(V.CommitID), 0u);
  ASSERT_NE(V.BuildInfo, nullptr);
  EXPECT_GT(std::strlen(V.BuildInfo), 0u);
}

TEST(VersionTest, EqualityIgnoresCommitAndBuild) {
  rt::Version A{1, 2, 3, "", "abc", "gcc"};
  rt::Version B{1, 2, 3, "", "def", "clang"};
  rt::Version C{1, 2, 3, "-rc1", "abc", "gcc"};
  EXPECT_TRUE(A == B);
  EXPECT_TRUE(A != C);
  EXPECT_TRUE(A != (rt::Version{1, 2, 4, "", "", ""}));
}

TEST(VersionTest, Prints) {
  std::ostringstream OS;
  const rt::Version Headers = OPTIMIUM_RT_CURRENT_VERSION;
  OS << Headers;
  EXPECT_EQ(OS.str(), "4.4.0");
  std::ostringstream Full;
  Full << rt::Version{4, 4, 1, "-rc1", "abc123", "GNU 12"};
  EXPECT_EQ(Full.str(), "4.4.1-rc1 (commit abc123, GNU 12)");
}
