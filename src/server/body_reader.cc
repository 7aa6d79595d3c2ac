#include "server/body_reader.h"

#include <nlohmann/json.hpp>

#include <set>
#include <vector>

namespace allot {
namespace {

using Json = nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// What both builders below share: the first error is kept (the parse stops at it), and
// nlohmann's parse error is worded for a person.
class RefusingSax : public nlohmann::json_sax<Json> {
 public:
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 6: …": the part after "] ".
    std::string what = e.what();
    size_t cut = what.find("] ");
    return Fail("malformed JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
  }
  const std::string& error() const { return error_; }

 protected:
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

 private:
  std::string error_;
};

// Builds the YAML::Node tree as nlohmann's SAX parser reads the JSON; refuses a key seen twice
// in one object, which nlohmann itself would let the last one win.
class TreeBuilder : public RefusingSax {
 public:
  explicit TreeBuilder(std::string root) : root_(std::move(root)) {}

  bool null() override { return Put(YAML::Node(YAML::NodeType::Null)); }
  bool boolean(bool v) override { return Put(YAML::Node(v ? "true" : "false")); }
  bool number_integer(number_integer_t v) override { return Put(YAML::Node(std::to_string(v))); }
  bool number_unsigned(number_unsigned_t v) override { return Put(YAML::Node(std::to_string(v))); }
  // `text` is the number as written ("0.0001", "1e3", "99999999999999999999"): the field
  // readers parse it exactly and quote it in their errors.
  bool number_float(number_float_t, const string_t& text) override { return Put(YAML::Node(text)); }
  bool string(string_t& v) override { return Put(YAML::Node(v)); }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return Open(YAML::Node(YAML::NodeType::Map)); }
  bool key(string_t& k) override {
    Frame& f = stack_.back();
    f.key = k;
    if (!f.keys.insert(k).second) return Fail(Path() + ": duplicate key; expected each key once in an object");
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(YAML::Node(YAML::NodeType::Sequence)); }
  bool end_array() override { return Close(); }

  const YAML::Node& tree() const { return tree_; }

 private:
  struct Frame {
    YAML::Node node;
    std::string path;      // of this container, under root_
    std::set<std::string> keys;
    std::string key;       // an object's key being read
    size_t index = 0;      // an array's next index
  };

  // The path of the value being read now: "job.tasks[0].gpus".
  std::string Path() const {
    if (stack_.empty()) return root_;
    const Frame& f = stack_.back();
    if (f.node.IsMap()) return f.path.empty() ? f.key : f.path + "." + f.key;
    return f.path + "[" + std::to_string(f.index) + "]";
  }

  bool Put(const YAML::Node& v) {
    if (stack_.empty()) {
      tree_ = v;
      return true;
    }
    Frame& f = stack_.back();
    if (f.node.IsMap()) {
      f.node[f.key] = v;
    } else {
      f.node.push_back(v);
      ++f.index;
    }
    return true;
  }

  bool Open(const YAML::Node& container) {
    if (static_cast<int>(stack_.size()) >= kMaxBodyDepth) {
      return Fail(Path() + ": nested deeper than " + std::to_string(kMaxBodyDepth) + " levels; expected a flatter object");
    }
    std::string path = Path();
    Put(container);  // a handle: what is added to `container` later shows in the tree
    stack_.push_back(Frame{container, path, {}, "", 0});
    return true;
  }

  bool Close() {
    stack_.pop_back();
    return true;
  }


  std::string root_;
  std::vector<Frame> stack_;
  YAML::Node tree_;
};

// Builds the nlohmann::json value as the SAX parser reads it (what nlohmann's own DOM parser
// does), refusing a key seen twice in one object: the object's map says so as the key goes in,
// so a heartbeat (thousands a second) pays no set of keys or path per object. The path is
// spelled only for the error: "gpus.index" (object keys, arrays not indexed).
class StrictJsonBuilder : public RefusingSax {
 public:
  bool null() override { return Put(nullptr); }
  bool boolean(bool v) override { return Put(v); }
  bool number_integer(number_integer_t v) override { return Put(v); }
  bool number_unsigned(number_unsigned_t v) override { return Put(v); }
  bool number_float(number_float_t v, const string_t&) override { return Put(v); }
  // Copied, not moved: a moved-from token buffer makes the lexer grow a new one for the next
  // token, while a copy of a short string (most keys and values) allocates nothing.
  bool string(string_t& v) override { return Put(v); }
  bool binary(binary_t&) override { return Fail("malformed JSON: binary values are not JSON"); }

  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool key(string_t& k) override {
    Level& l = stack_.back();
    auto [it, inserted] = l.value->get_ref<Json::object_t&>().emplace(k, nullptr);
    l.key = &it->first;
    next_ = &it->second;
    if (!inserted) return Fail(Path() + ": duplicate key; expected each key once in an object");
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_array() override { return Close(); }

  Json& root() { return root_; }

 private:
  struct Level {
    Json* value;                     // the object or array being read
    const std::string* key = nullptr;  // an object's key being read (owned by its map)
  };

  // The keys of the open objects down to the one being read: "gpus.index".
  std::string Path() const {
    std::string out;
    for (const Level& l : stack_) {
      if (!l.key) continue;
      if (!out.empty()) out += '.';
      out += *l.key;
    }
    return out;
  }

  // Where the value goes: the root, an array's end, or the object's slot for the last key. The
  // containers on the stack stay put: an array grows only while none of its elements is open.
  template <class V>
  Json* Place(V&& v) {
    if (stack_.empty()) {
      root_ = Json(std::forward<V>(v));
      return &root_;
    }
    Json& top = *stack_.back().value;
    if (top.is_array()) {
      auto& a = top.get_ref<Json::array_t&>();
      a.emplace_back(std::forward<V>(v));
      return &a.back();
    }
    *next_ = Json(std::forward<V>(v));
    return next_;
  }
  template <class V>
  bool Put(V&& v) {
    Place(std::forward<V>(v));
    return true;
  }
  bool Open(Json container) {
    stack_.push_back(Level{Place(std::move(container))});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  Json root_;
  std::vector<Level> stack_;
  Json* next_ = nullptr;
};

Result<YAML::Node> ParseJsonBody(const std::string& body, const std::string& root) {
  TreeBuilder builder(root);
  bool ok = Json::sax_parse(body, &builder, nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (!ok || !builder.error().empty()) {
    return Err(InvalidArgument("body: " + (builder.error().empty() ? std::string("malformed JSON") : builder.error())));
  }
  return builder.tree();
}

Result<YAML::Node> ParseYamlBody(const std::string& body) {
  try {
    return YAML::Load(body);
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgument("body:" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg));
  }
}

}  // namespace

Result<BodyFormat> BodyFormatOf(std::string_view content_type) {
  std::string type = Lower(Trim(content_type.substr(0, content_type.find(';'))));
  if (type.empty() || type == "application/json") return BodyFormat::kJson;
  if (type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml" || type == "text/x-yaml") {
    return BodyFormat::kYaml;
  }
  return Err(Status(Code::kUnsupportedMediaType,
                    "Content-Type: '" + std::string(content_type) + "' is not read here; expected application/json (also "
                    "assumed when there is no Content-Type) or YAML as application/yaml, application/x-yaml, text/yaml "
                    "or text/x-yaml"));
}

Result<YAML::Node> ParseBody(BodyFormat format, const std::string& body, const std::string& root) {
  return format == BodyFormat::kJson ? ParseJsonBody(body, root) : ParseYamlBody(body);
}

Result<Json> ParseStrictJson(const std::string& body) {
  StrictJsonBuilder builder;
  bool ok = Json::sax_parse(body, &builder, nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (!builder.error().empty()) return Err(InvalidArgument("body: " + builder.error()));
  if (!ok) return Err(InvalidArgument("body: malformed JSON"));
  return std::move(builder.root());
}

Result<YAML::Node> ReadBody(std::string_view content_type, const std::string& body, const std::string& root) {
  auto format = BodyFormatOf(content_type);
  if (!format) return Err(format.error());
  return ParseBody(*format, body, root);
}

}  // namespace allot
