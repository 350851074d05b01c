// Bad input gives typed errors with messages naming the op.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/cpp/test_helpers.h"

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ErrorPaths, MatmulShapeMismatch) {
  EXPECT_EQ(error_of([] { kiln::api::mm(kiln::api::zeros({2, 3}), kiln::api::zeros({4, 5})); }),
            "mm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
}

TEST(ErrorPaths, BroadcastMismatch) {
  std::string e = error_of([] { kiln::api::add(kiln::api::zeros({2, 3}), kiln::api::zeros({4})); });
  EXPECT_NE(e.find("add()"), std::string::npos) << e;
  EXPECT_NE(e.find("must match the size"), std::string::npos) << e;
}

TEST(ErrorPaths, InPlaceCannotBroadcastSelf) {
  std::string e = error_of([] { kiln::api::zeros({3}).add_(kiln::api::zeros({2, 3})); });
  EXPECT_NE(e.find("doesn't match the broadcast shape"), std::string::npos) << e;
}

TEST(ErrorPaths, InPlaceIntoExpandedTensor) {
  std::string e = error_of([] { kiln::api::zeros({3}).expand({2, 3}).add_(1); });
  EXPECT_NE(e.find("more than one element of the written-to tensor"), std::string::npos) << e;
}

TEST(ErrorPaths, IntegerMeanIsRejected) {
  std::string e = error_of([] { kiln::api::ones({3}, kiln::ScalarType::Int64).mean(); });
  EXPECT_NE(e.find("mean(): could not infer output dtype"), std::string::npos) << e;
}
