#include "planner/layout/notation.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/utf8.h"

namespace reshard {
namespace {

// Input as quoted in a message: valid UTF-8 and short, however long or
// malformed the input (a 10 MB state must not give a 10 MB message).
std::string Shown(absl::string_view text) { return Abbreviate(text, 64); }

constexpr absl::string_view kExpectedTokens = "S(d), R, P(op), P or _S(d, sf)";

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// One token as written. Shard and StridedShard are both "shard-like".
struct Token {
  enum class Kind { kShard, kStrided, kReplicate, kPartial };
  Kind kind = Kind::kReplicate;
  int dim = 0;               // normalised tensor dim (shard-like only)
  int64_t split_factor = 1;  // 1 for a plain Shard
  ReduceOp op = ReduceOp::kSum;
  int64_t index = -1;      // the [k] suffix, -1 when absent
  size_t offset = 0;       // where the token starts in the text
  absl::string_view text;  // the token as written, suffix included

  bool shard_like() const { return kind == Kind::kShard || kind == Kind::kStrided; }
  Placement placement() const {
    switch (kind) {
      case Kind::kShard:
      case Kind::kStrided:
        return Placement::Shard(dim);
      case Kind::kPartial:
        return Placement::Partial(op);
      case Kind::kReplicate:
        break;
    }
    return Placement::Replicate();
  }
};

// A hand-written scanner: the grammar is tiny and the errors must say exactly
// where and what went wrong, which a regex cannot.
class Parser {
 public:
  Parser(absl::string_view text, int tensor_ndim) : text_(text), tensor_ndim_(tensor_ndim) {}

  absl::StatusOr<std::vector<Token>> Tokenize() {
    std::vector<Token> tokens;
    SkipSpaces();
    if (pos_ == text_.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "state \"%s\" is empty; expected one token per mesh dim, each one of %s (e.g. S(0)R)",
          Shown(text_), kExpectedTokens));
    }
    while (true) {
      Token token;
      RESHARD_RETURN_IF_ERROR(ParseToken(static_cast<int>(tokens.size()), &token));
      tokens.push_back(token);
      SkipSpaces();
      if (pos_ == text_.size()) break;
      if (text_[pos_] == ',') {
        ++pos_;
        SkipSpaces();
        if (pos_ == text_.size() || text_[pos_] == ',') {
          return absl::InvalidArgumentError(absl::StrFormat(
              "state \"%s\": stray ',' after token %d (\"%s\"); expected a token (%s) after "
              "each ','",
              Shown(text_), tokens.size(), Shown(tokens.back().text), kExpectedTokens));
        }
      }
    }
    return tokens;
  }

  // "state "S(0)X": token 2 ("X" at offset 4): <what>".
  absl::Status TokenError(int index, size_t offset, absl::string_view token_text,
                          absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("state \"%s\": token %d (\"%s\" at offset %d): %s", Shown(text_), index + 1,
                        Shown(token_text), offset, what));
  }
  absl::Status TokenError(int index, const Token& t, absl::string_view what) const {
    return TokenError(index, t.offset, t.text, what);
  }

 private:
  void SkipSpaces() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  bool Consume(char c) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // Optional '-' then at most 10 digits (no valid value needs more).
  bool ParseInt(int64_t* out, bool allow_negative) {
    SkipSpaces();
    size_t p = pos_;
    bool negative = false;
    if (allow_negative && p < text_.size() && text_[p] == '-') negative = true, ++p;
    size_t digits_start = p;
    int64_t value = 0;
    while (p < text_.size() && IsDigit(text_[p]) && p - digits_start < 10) {
      value = value * 10 + (text_[p] - '0');
      ++p;
    }
    if (p == digits_start || (p < text_.size() && IsDigit(text_[p]))) return false;
    pos_ = p;
    *out = negative ? -value : value;
    return true;
  }

  // What the user wrote from `start` to the next separator, for messages.
  absl::string_view Snippet(size_t start) const {
    size_t end = start;
    int depth = 0;
    while (end < text_.size() && end - start < 24) {
      char c = text_[end];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (depth <= 0 && (IsSpace(c) || c == ',') && end > start) break;
      ++end;
      if (depth == 0 && (c == ')' || c == ']')) {
        // A complete S(...) or [k] ends here unless a [k] follows.
        if (end < text_.size() && text_[end] == '[') continue;
        break;
      }
    }
    end = std::max(end, start + 1);
    // Never end inside a multi-byte UTF-8 character.
    while (end < text_.size() && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) ++end;
    return text_.substr(start, end - start);
  }

  absl::Status ParseToken(int index, Token* t) {
    const size_t start = pos_;
    t->offset = start;
    absl::string_view rest = text_.substr(pos_);
    if (absl::StartsWith(rest, "_S")) {
      RESHARD_RETURN_IF_ERROR(ParseStrided(index, t));
    } else if (absl::StartsWith(rest, "S")) {
      RESHARD_RETURN_IF_ERROR(ParseShard(index, t));
    } else if (absl::StartsWith(rest, "R")) {
      ++pos_;
      t->kind = Token::Kind::kReplicate;
    } else if (absl::StartsWith(rest, "P")) {
      RESHARD_RETURN_IF_ERROR(ParsePartial(index, t));
    } else {
      return Malformed(index, start,
                       absl::StrCat("unknown token; expected one of ", kExpectedTokens));
    }
    return ParseOrderIndex(index, t);
  }

  absl::Status Malformed(int index, size_t start, absl::string_view what) const {
    return TokenError(index, start, Snippet(start), what);
  }

  // `_S(d, sf)`.
  absl::Status ParseStrided(int index, Token* t) {
    pos_ += 2;
    int64_t dim = 0, sf = 0;
    if (!Consume('(') || !ParseInt(&dim, true) || !Consume(',') || !ParseInt(&sf, false) ||
        !Consume(')')) {
      return Malformed(index, t->offset,
                       "malformed StridedShard; expected _S(d, sf), e.g. _S(0, 2)");
    }
    if (sf < 1) return Malformed(index, t->offset, "split factor must be >= 1");
    t->kind = Token::Kind::kStrided;
    t->split_factor = sf;
    return SetDim(index, t->offset, dim, t);
  }

  // `S(d)`.
  absl::Status ParseShard(int index, Token* t) {
    ++pos_;
    int64_t dim = 0;
    if (!Consume('(') || !ParseInt(&dim, true) || !Consume(')')) {
      return Malformed(index, t->offset,
                       "malformed Shard; expected S(d) with an integer tensor dim, e.g. S(0)");
    }
    t->kind = Token::Kind::kShard;
    return SetDim(index, t->offset, dim, t);
  }

  // `P(op)`, or `P` alone for P(sum) (spec §3).
  absl::Status ParsePartial(int index, Token* t) {
    ++pos_;
    t->kind = Token::Kind::kPartial;
    const size_t before = pos_;
    if (!Consume('(')) {
      pos_ = before;
      return absl::OkStatus();
    }
    SkipSpaces();
    const size_t name_start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    absl::string_view name = text_.substr(name_start, pos_ - name_start);
    if (!Consume(')')) {
      return Malformed(index, t->offset,
                       "malformed Partial; expected P(op) with op one of sum, avg, max, min, "
                       "prod, or P alone for P(sum)");
    }
    std::optional<ReduceOp> op = ParseReduceOp(name);
    if (!op) {
      return TokenError(index, t->offset, text_.substr(t->offset, pos_ - t->offset),
                        absl::StrFormat("unknown reduce op \"%s\"; valid ops: sum, avg, max, "
                                        "min, prod",
                                        name));
    }
    t->op = *op;
    return absl::OkStatus();
  }

  // The optional `[k]` suffix; sets t->text to the whole token.
  absl::Status ParseOrderIndex(int index, Token* t) {
    const size_t before_suffix = pos_;
    SkipSpaces();
    if (pos_ >= text_.size() || text_[pos_] != '[') {
      pos_ = before_suffix;
      t->text = text_.substr(t->offset, pos_ - t->offset);
      return absl::OkStatus();
    }
    ++pos_;
    int64_t k = 0;
    if (!ParseInt(&k, false) || !Consume(']')) {
      return Malformed(index, t->offset,
                       "malformed order index; expected [k] with k >= 0, e.g. S(0)[1]");
    }
    t->text = text_.substr(t->offset, pos_ - t->offset);
    if (t->kind != Token::Kind::kShard) {
      return TokenError(index, *t,
                        t->kind == Token::Kind::kStrided
                            ? "an order index [k] cannot follow _S(d, sf); the split factor "
                              "already gives the order"
                            : "an order index [k] may only follow S(d)");
    }
    t->index = k;
    return absl::OkStatus();
  }

  absl::Status SetDim(int index, size_t start, int64_t dim, Token* t) {
    if (dim < -tensor_ndim_ || dim >= tensor_ndim_) {
      std::string valid =
          tensor_ndim_ == 0 ? std::string("a 0-D tensor cannot be sharded")
                            : absl::StrFormat("valid: 0..%d, or -%d..-1 counted from the last dim",
                                              tensor_ndim_ - 1, tensor_ndim_);
      return TokenError(index, start, text_.substr(start, pos_ - start),
                        absl::StrFormat("tensor dim %d is out of range for a %d-D tensor (%s)", dim,
                                        tensor_ndim_, valid));
    }
    t->dim = static_cast<int>(dim < 0 ? dim + tensor_ndim_ : dim);
    return absl::OkStatus();
  }

  absl::string_view text_;
  int tensor_ndim_;
  size_t pos_ = 0;
};

// Partial ops: one op, or exactly {sum, avg} (spec §4 case 6).
absl::Status CheckPartialOps(const Parser& parser, const std::vector<Token>& tokens) {
  unsigned ops = 0;
  int first_partial = -1;
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    if (tokens[i].kind != Token::Kind::kPartial) continue;
    const unsigned next = ops | (1u << static_cast<int>(tokens[i].op));
    if (!PartialOpsCompatible(next)) {
      return parser.TokenError(
          i, tokens[i],
          absl::StrFormat("Partial op %s cannot be mixed with %s (token %d); only sum and avg "
                          "may be mixed",
                          ReduceOpName(tokens[i].op), tokens[first_partial].text,
                          first_partial + 1));
    }
    if (first_partial < 0) first_partial = i;
    ops = next;
  }
  return absl::OkStatus();
}

// [k] indices and _S are two ways of giving the order; one state uses one.
absl::Status CheckOneWayOfOrdering(const Parser& parser, const std::vector<Token>& tokens) {
  int first_indexed = -1, first_strided = -1;
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    if (tokens[i].index >= 0 && first_indexed < 0) first_indexed = i;
    if (tokens[i].kind == Token::Kind::kStrided && first_strided < 0) first_strided = i;
  }
  if (first_indexed >= 0 && first_strided >= 0) {
    return parser.TokenError(
        first_indexed, tokens[first_indexed],
        absl::StrFormat("an order index [k] cannot be combined with _S(d, sf) (token %d, \"%s\") "
                        "in one state; give the shard order one way or the other",
                        first_strided + 1, Shown(tokens[first_strided].text)));
  }
  return absl::OkStatus();
}

// Tensor dim d's order from the [k] indices of its S tokens (spec §3): all or
// none, a permutation; none means ascending. `mesh_dims` is ascending, non-empty.
absl::StatusOr<std::vector<int>> IndexedOrder(const Parser& parser,
                                              const std::vector<Token>& tokens, int d,
                                              const std::vector<int>& mesh_dims) {
  const int count = static_cast<int>(mesh_dims.size());
  int indexed = 0;
  for (int m : mesh_dims) indexed += tokens[m].index >= 0 ? 1 : 0;
  if (indexed == 0) return mesh_dims;
  if (count == 1) {
    if (tokens[mesh_dims[0]].index == 0) return mesh_dims;
    return parser.TokenError(
        mesh_dims[0], tokens[mesh_dims[0]],
        absl::StrFormat("tensor dim %d is sharded on one mesh dim only, so its only valid "
                        "order index is [0] (or none)",
                        d));
  }
  for (int m : mesh_dims) {
    if (tokens[m].index < 0) {
      return parser.TokenError(
          m, tokens[m],
          absl::StrFormat("tensor dim %d is sharded on %d mesh dims and other S(%d) tokens "
                          "have an order index; give [k] on every S(%d) token or on none",
                          d, count, d, d));
    }
  }
  std::vector<int> by_index(count, -1);
  for (int m : mesh_dims) {
    const int64_t k = tokens[m].index;
    const char* problem = k >= count ? "is out of range" : by_index[k] >= 0 ? "repeats" : nullptr;
    if (problem != nullptr) {
      return parser.TokenError(
          m, tokens[m],
          absl::StrFormat("order index %d %s; tensor dim %d is sharded on %d mesh dims, so its "
                          "indices must be a permutation of 0..%d",
                          k, problem, d, count, count - 1));
    }
    by_index[k] = m;
  }
  return by_index;
}

absl::StatusOr<ShardOrder> IndexedShardOrder(const Parser& parser, const std::vector<Token>& tokens,
                                             int tensor_ndim) {
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    std::vector<int> mesh_dims;  // ascending
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      if (tokens[i].shard_like() && tokens[i].dim == d) mesh_dims.push_back(i);
    }
    if (mesh_dims.empty()) continue;
    RESHARD_ASSIGN_OR_RETURN(std::vector<int> dims, IndexedOrder(parser, tokens, d, mesh_dims));
    order.push_back({d, std::move(dims)});
  }
  return order;
}

// Spec §7 decode: walk mesh dims right to left, inserting each into its
// tensor dim's order where the splits already there multiply to its split
// factor.
absl::StatusOr<ShardOrder> DecodeStrided(const Parser& parser, const std::vector<Token>& tokens,
                                         const DeviceMesh& mesh) {
  std::vector<int> decoded[kMaxTensorDims];
  for (int m = static_cast<int>(tokens.size()) - 1; m >= 0; --m) {
    const Token& t = tokens[m];
    if (!t.shard_like()) continue;
    std::vector<int>& dims = decoded[t.dim];
    int64_t product = 1;
    std::vector<int64_t> possible;
    int at = -1;
    for (size_t i = 0; i <= dims.size() && at < 0; ++i) {
      if (i > 0) product *= mesh.size(dims[i - 1]);
      possible.push_back(product);
      if (product == t.split_factor) at = static_cast<int>(i);
    }
    if (at < 0) {
      return parser.TokenError(
          m, t,
          absl::StrFormat("cannot decode: split factor %d matches no product of the splits "
                          "already applied to tensor dim %d by the mesh dims to its right "
                          "(possible split factors: %s)",
                          t.split_factor, t.dim, absl::StrJoin(possible, ", ")));
    }
    dims.insert(dims.begin() + at, m);
  }
  ShardOrder order;
  for (int d = 0; d < kMaxTensorDims; ++d) {
    if (!decoded[d].empty()) order.push_back({d, decoded[d]});
  }
  return order;
}

}  // namespace

absl::StatusOr<ParsedState> ParseDistState(absl::string_view text, const DeviceMesh& mesh,
                                           int tensor_ndim) {
  if (tensor_ndim < 0 || tensor_ndim > kMaxTensorDims) {
    return absl::InvalidArgumentError(
        absl::StrFormat("state \"%s\": the tensor has %d dims, the supported maximum is %d",
                        Shown(text), tensor_ndim, kMaxTensorDims));
  }
  Parser parser(text, tensor_ndim);
  RESHARD_ASSIGN_OR_RETURN(const std::vector<Token> tokens, parser.Tokenize());
  if (static_cast<int>(tokens.size()) != mesh.ndim()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "state \"%s\": %d tokens for a %d-D mesh (%s); expected one token per mesh dim",
        Shown(text), tokens.size(), mesh.ndim(), mesh.ToString()));
  }
  RESHARD_RETURN_IF_ERROR(CheckPartialOps(parser, tokens));
  RESHARD_RETURN_IF_ERROR(CheckOneWayOfOrdering(parser, tokens));
  // Indices are checked even when _S decodes the order (they are then absent).
  RESHARD_ASSIGN_OR_RETURN(ShardOrder order, IndexedShardOrder(parser, tokens, tensor_ndim));
  ParsedState parsed;
  for (const Token& t : tokens) parsed.strided = parsed.strided || t.kind == Token::Kind::kStrided;
  if (parsed.strided) {
    RESHARD_ASSIGN_OR_RETURN(order, DecodeStrided(parser, tokens, mesh));
  }

  std::vector<Placement> placements;
  placements.reserve(tokens.size());
  for (const Token& t : tokens) placements.push_back(t.placement());
  absl::StatusOr<DistState> state = DistState::Create(placements, order);
  if (!state.ok()) {
    return absl::InternalError(
        absl::StrCat("state \"", Shown(text), "\": ", state.status().message()));
  }
  parsed.state = *state;
  return parsed;
}

std::string FormatStrided(const DistState& state, const DeviceMesh& mesh) {
  std::string out;
  for (int m = 0; m < state.ndim(); ++m) {
    Placement p = state.placement(m);
    if (!p.is_shard()) {
      absl::StrAppend(&out, p.ToString());
      continue;
    }
    // Spec §7 encode: the splits applied before this one by larger mesh dims.
    MeshDimList order = state.OrderOf(p.dim());
    int64_t sf = 1;
    for (int i = 0; i < state.OrderPosition(m); ++i) {
      if (order[i] > m) sf *= mesh.size(order[i]);
    }
    if (sf == 1) {
      absl::StrAppend(&out, p.ToString());
    } else {
      absl::StrAppend(&out, "_S(", p.dim(), ", ", sf, ")");
    }
  }
  return out;
}

}  // namespace reshard
