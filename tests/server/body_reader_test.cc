// API bodies read by their Content-Type (server/body_reader.h): JSON strictly as JSON, YAML
// only when the type says so.
#include <gtest/gtest.h>

#include "server/body_reader.h"

namespace allot {
namespace {

std::string ErrorOf(const std::string& json) {
  auto tree = ParseBody(BodyFormat::kJson, json, "job");
  return tree ? "(accepted)" : tree.error().message();
}

TEST(BodyReader, ReadsYamlOnlyWhenTheContentTypeSaysYaml) {
  EXPECT_EQ(*BodyFormatOf(""), BodyFormat::kJson);  // no Content-Type: JSON
  EXPECT_EQ(*BodyFormatOf("application/json"), BodyFormat::kJson);
  EXPECT_EQ(*BodyFormatOf("Application/JSON; charset=utf-8"), BodyFormat::kJson);
  for (const char* yaml : {"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml; charset=utf-8", "TEXT/YAML"}) {
    EXPECT_EQ(*BodyFormatOf(yaml), BodyFormat::kYaml) << yaml;
  }
  auto other = BodyFormatOf("text/plain");
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code(), Code::kUnsupportedMediaType);
  EXPECT_NE(other.error().message().find("Content-Type: 'text/plain' is not read here; expected application/json"), std::string::npos)
      << other.error().message();
}

// With YAML's parser, all of these were taken as a job under Content-Type: application/json.
TEST(BodyReader, RefusesWhatIsNotJsonUnderAJsonContentType) {
  EXPECT_NE(ErrorOf(R"({"name": "a"} garbage)").find("body: malformed JSON: parse error at line 1, "), std::string::npos)
      << ErrorOf(R"({"name": "a"} garbage)");
  EXPECT_NE(ErrorOf(R"({"name": !!str a})").find("body: malformed JSON"), std::string::npos);
  EXPECT_NE(ErrorOf("{name: a}").find("body: malformed JSON"), std::string::npos);
  EXPECT_NE(ErrorOf("").find("body: malformed JSON"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"name\": \"\xff\"}").find("body: malformed JSON"), std::string::npos) << "invalid UTF-8";
}

TEST(BodyReader, RefusesADuplicateKeyNamingItsPath) {
  EXPECT_EQ(ErrorOf(R"({"name": "a", "name": "b"})"), "body: job.name: duplicate key; expected each key once in an object");
  EXPECT_EQ(ErrorOf(R"({"tasks": {"gpus": 1, "gpus": 2}})"), "body: job.tasks.gpus: duplicate key; expected each key once in an object");
  EXPECT_EQ(ErrorOf(R"({"tasks": [{"cpu": 1}, {"cpu": 1, "cpu": 2}]})"),
            "body: job.tasks[1].cpu: duplicate key; expected each key once in an object");
  // The same key in two objects is no duplicate.
  EXPECT_EQ(ErrorOf(R"({"tasks": [{"cpu": 1}, {"cpu": 2}]})"), "(accepted)");
}

TEST(BodyReader, BuildsTheTreeWithEscapesDecodedAndNumbersAsWritten) {
  auto tree = ParseBody(BodyFormat::kJson,
                        R"({"name": "\ud83d\ude00 \u00e9\n", "tasks": [{"gpus": 0.0001}, {"count": 5}], "big": 99999999999999999999,)"
                        R"( "on": true, "none": null, "neg": -3})",
                        "job");
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  const YAML::Node& t = *tree;
  EXPECT_EQ(t["name"].Scalar(), "\xF0\x9F\x98\x80 \xC3\xA9\n");
  EXPECT_EQ(t["tasks"][0]["gpus"].Scalar(), "0.0001");
  EXPECT_EQ(t["tasks"][1]["count"].Scalar(), "5");
  EXPECT_EQ(t["big"].Scalar(), "99999999999999999999");
  EXPECT_EQ(t["on"].Scalar(), "true");
  EXPECT_TRUE(t["none"].IsNull());
  EXPECT_EQ(t["neg"].Scalar(), "-3");
  std::vector<std::string> keys;
  for (const auto& kv : t) keys.push_back(kv.first.Scalar());
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "tasks", "big", "on", "none", "neg"})) << "in the order written";
}

TEST(BodyReader, RefusesNestingDeeperThanTheLimit) {
  std::string deep = std::string(kMaxBodyDepth + 1, '[') + std::string(kMaxBodyDepth + 1, ']');
  EXPECT_NE(ErrorOf(deep).find("nested deeper than 64 levels"), std::string::npos) << ErrorOf(deep);
  std::string ok = std::string(kMaxBodyDepth, '[') + std::string(kMaxBodyDepth, ']');
  EXPECT_EQ(ErrorOf(ok), "(accepted)");
}

TEST(BodyReader, ReadsYamlAsYaml) {
  auto tree = ReadBody("application/yaml", "name: a\ntasks: {gpus: 1}\n", "job");
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ((*tree)["tasks"]["gpus"].Scalar(), "1");
  auto bad = ReadBody("text/yaml", "name: [a\n", "job");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("malformed YAML"), std::string::npos) << bad.error().message();
}

TEST(StrictJson, RefusesDuplicateKeysAndTrailingBytes) {
  auto dup = ParseStrictJson(R"({"tenant": "a", "spend": "1", "spend": "2"})");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().message(), "body: spend: duplicate key; expected each key once in an object");
  EXPECT_FALSE(ParseStrictJson(R"({"tenant": "a"} x)").has_value());
  EXPECT_TRUE(ParseStrictJson(R"({"a": {"k": 1}, "b": {"k": 2}})").has_value());
}

// The strict parse builds the value itself (no per-object key set): it must read every JSON
// form as nlohmann does, and still name a repeated key by its path, inside arrays too.
TEST(StrictJson, ReadsWhatNlohmannReadsAndNamesARepeatedKeyInsideAnArrayByItsPath) {
  const std::string body =
      R"({"node": "n1", "gpus": [{"index": 0, "ecc": null, "ok": true, "power": 612.5, "big": 18446744073709551615,)"
      R"( "neg": -3, "peers": [[1, 2], [], {}]}, {"index": 1, "name": "caf\u00e9 \"x\""}], "empty": {}, "list": []})";
  auto strict = ParseStrictJson(body);
  ASSERT_TRUE(strict.has_value()) << strict.error().message();
  EXPECT_EQ(*strict, nlohmann::json::parse(body));
  EXPECT_EQ(ParseStrictJson("[1, [2, {\"a\": [3]}], \"s\"]").value(), nlohmann::json::parse("[1, [2, {\"a\": [3]}], \"s\"]"));
  EXPECT_EQ(ParseStrictJson("7").value(), 7);

  auto dup = ParseStrictJson(R"({"node": "n1", "gpus": [{"index": 0}, {"index": 1, "ecc": {"c": 1, "c": 2}}]})");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().message(), "body: gpus.ecc.c: duplicate key; expected each key once in an object");
  auto in_array = ParseStrictJson(R"({"gpus": [{"index": 0, "index": 1}]})");
  ASSERT_FALSE(in_array.has_value());
  EXPECT_EQ(in_array.error().message(), "body: gpus.index: duplicate key; expected each key once in an object");
  auto malformed = ParseStrictJson(R"({"gpus": [1, 2})");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_NE(malformed.error().message().find("body: malformed JSON: "), std::string::npos) << malformed.error().message();
}

// Found by fuzz_api_budget: a number past a double's range threw nlohmann's out_of_range, which
// nothing caught (the fuzzer's "deadly signal"; allotd would have answered 500).
TEST(StrictJson, RefusesANumberPastADoublesRangeSayingSo) {
  auto big = ParseStrictJson("4441e4441e4");
  ASSERT_FALSE(big.has_value());
  EXPECT_NE(big.error().message().find("body: malformed JSON"), std::string::npos) << big.error().message();
  EXPECT_NE(big.error().message().find("4441e4441"), std::string::npos) << big.error().message();
  auto in_body = ParseStrictJson(R"({"tenant": "a", "spend": 1e400})");
  ASSERT_FALSE(in_body.has_value());
}

}  // namespace
}  // namespace allot
