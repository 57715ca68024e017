// Chat templates (memfit/chat/chat_template.h): the errors and caps, natively and in WASM. What a
// template renders to is held byte-exact against jinja2 itself in
// tests/cli/test_chat_template_oracle.cpp; the few renders here are the formats' published shapes.
#include <doctest/doctest.h>

#include <string>

#include "memfit/chat/chat_template.h"

using memfit::ErrorCode;
using memfit::chat::ChatTemplate;
using memfit::chat::RenderLimits;
using memfit::chat::render_chat;
using ojson = nlohmann::ordered_json;

namespace {

const ojson kUserHello = ojson::parse(R"([{"role": "user", "content": "Hello"}])");

memfit::Result<std::string> render(const std::string& text, const ojson& extra = ojson::object(),
                                   const RenderLimits& limits = {}) {
  return render_chat(text, kUserHello, true, extra, limits);
}

void check_error(const memfit::Result<std::string>& r, ErrorCode code, const std::string& fragment) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == code);
  INFO(r.error().message());
  CHECK(r.error().message().find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("chat template: ChatML, the format Qwen and OpenAI document") {
  const std::string chatml =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
      "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const auto r = render(chatml);
  REQUIRE(r.ok());
  CHECK(*r == "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
  const auto no_prompt = render_chat(chatml, kUserHello, false);
  REQUIRE(no_prompt.ok());
  CHECK(*no_prompt == "<|im_start|>user\nHello<|im_end|>\n");
}

TEST_CASE("chat template: trim_blocks and lstrip_blocks as transformers sets them") {
  // A block tag's own line leaves nothing behind; an expression's line keeps its indent.
  const auto r = render("a\n  {% if true %}\n  x\n  {% endif %}\n  {{ 'v' }}\n  {# c #}\nend\n");
  REQUIRE(r.ok());
  CHECK(*r == "a\n  x\n  v\nend");
}

TEST_CASE("chat template: syntax errors name the line, the column and what was expected") {
  check_error(render("{% for m in messages %}x"), ErrorCode::kTemplateSyntax,
              "expected 'endfor' to close the tag at line 1, column 4, got the end of the template");
  check_error(render("ok\n{% if x %}a{% else %}b"), ErrorCode::kTemplateSyntax, "expected 'endif'");
  check_error(render("{{ x "), ErrorCode::kTemplateSyntax, "chat template line 1, column 1: the tag opened here has no closing '}}'");
  check_error(render("x\n  {# never closed"), ErrorCode::kTemplateSyntax, "line 2, column 3: the comment opened here has no closing '#}'");
  check_error(render("{{ 'abc }}"), ErrorCode::kTemplateSyntax, "the string that starts here is not closed");
  check_error(render("{{ x | frobnicate }}"), ErrorCode::kTemplateSyntax, "no filter named 'frobnicate'");
  check_error(render("{{ x is frobnicated }}"), ErrorCode::kTemplateSyntax, "no test named 'frobnicated'");
  check_error(render("{% include 'other.jinja' %}"), ErrorCode::kTemplateSyntax, "the 'include' tag is not supported");
  check_error(render("{% endfor %}"), ErrorCode::kTemplateSyntax, "'endfor' without a matching opening tag");
  check_error(render("{{ 1 + }}"), ErrorCode::kTemplateSyntax, "line 1, column 8: expected an expression, got '}}'");
  check_error(render("{{ a $ b }}"), ErrorCode::kTemplateSyntax, "unexpected character '$'");
  check_error(render("{% set x %}"), ErrorCode::kTemplateSyntax, "expected 'endset'");
}

TEST_CASE("chat template: render errors name the position and the cause") {
  check_error(render("line one\n  {{ nothing.here }}"), ErrorCode::kTemplateRender,
              "chat template line 2, column 6: 'nothing' is undefined");
  check_error(render("{{ messages[0].content + 1 }}"), ErrorCode::kTemplateRender,
              "unsupported operand types for +: 'str object' and 'int object'");
  check_error(render("{{ raise_exception('System role not supported') }}"), ErrorCode::kTemplateRender,
              "column 4: raise_exception: System role not supported");
  check_error(render("{{ 1 // 0 }}"), ErrorCode::kTemplateRender, "integer division or modulo by zero");
  check_error(render("{{ 9223372036854775807 + 1 }}"), ErrorCode::kTemplateRender, "integer overflow");
  check_error(render("{% set x = 1 %}{% set x.a = 2 %}"), ErrorCode::kTemplateRender, "is not a namespace()");
  check_error(render("{{ messages | tojson(separators=1) }}"), ErrorCode::kTemplateRender, "separators");
  check_error(render("{{ 'a'() }}"), ErrorCode::kTemplateRender, "'str object' is not callable");
}

TEST_CASE("chat template: hostile templates stop at a cap, never crash") {
  SUBCASE("parentheses nested far past the parser's depth") {
    const std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
    check_error(render(deep), ErrorCode::kTemplateLimit, "nesting deeper than 128 levels");
  }
  SUBCASE("blocks nested far past the parser's depth") {
    std::string deep;
    for (int i = 0; i < 3000; ++i) deep += "{% if true %}";
    check_error(render(deep), ErrorCode::kTemplateLimit, "nesting deeper than");
  }
  SUBCASE("a loop over a huge range") {
    check_error(render("{% for i in range(100000000000) %}x{% endfor %}"), ErrorCode::kTemplateLimit,
                "over the iteration cap of 1000000");
  }
  SUBCASE("nested loops past the iteration cap") {
    RenderLimits limits;
    limits.max_loop_iterations = 1000;
    check_error(render("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", ojson::object(), limits),
                ErrorCode::kTemplateLimit, "more than 1000 loop iterations");
  }
  SUBCASE("output past the output cap") {
    RenderLimits limits;
    limits.max_output_bytes = 1 << 20;
    check_error(render("{% for i in range(100) %}{{ 'x' * 100000 }}{% endfor %}", ojson::object(), limits),
                ErrorCode::kTemplateLimit, "the output is over the cap");
    check_error(render("{{ 'x' * 10000000000 }}"), ErrorCode::kTemplateLimit, "over the output cap");
    check_error(render("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
                ErrorCode::kTemplateLimit, "over the output cap");
  }
  SUBCASE("a macro that calls itself") {
    check_error(render("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"), ErrorCode::kTemplateLimit,
                "macro calls nested deeper than 64");
  }
}

TEST_CASE("chat template: render_chat's arguments and transformers' defaults") {
  // tools and documents are None unless given; extra's keys are template variables.
  const auto defaults = render("{{ tools }} {{ documents }} {{ bos_token }}", {{"bos_token", "<s>"}});
  REQUIRE(defaults.ok());
  CHECK(*defaults == "None None <s>");
  check_error(render_chat("x", ojson::object(), false), ErrorCode::kInvalidArgument, "expected a JSON list");
  check_error(render("x", {{"messages", ojson::array()}}), ErrorCode::kInvalidArgument, "'messages' is set by the chat");
  // Parse once, render many times.
  const auto parsed = ChatTemplate::parse("{{ messages | length }}");
  REQUIRE(parsed.ok());
  const auto two = parsed->render({{"messages", {1, 2}}});
  REQUIRE(two.ok());
  CHECK(*two == "2");
  check_error(parsed->render(ojson::array()), ErrorCode::kInvalidArgument, "expected a JSON object");
}

TEST_CASE("chat template: tokenizer_config.json's chat_template and special tokens") {
  using memfit::chat::chat_template_of;
  CHECK(*chat_template_of(ojson{{"chat_template", "T"}}) == "T");
  const ojson named = {{"chat_template", {{{"name", "default"}, {"template", "D"}}, {{"name", "tool_use"}, {"template", "U"}}}}};
  CHECK(*chat_template_of(named) == "D");
  CHECK(*chat_template_of(named, true) == "U");
  CHECK(chat_template_of(ojson{{"bos_token", "<s>"}}).error().code() == ErrorCode::kMissingKey);
  CHECK(chat_template_of(ojson{{"chat_template", 3}}).error().code() == ErrorCode::kWrongType);
  CHECK(chat_template_of(ojson{{"chat_template", {{{"name", "other"}, {"template", "O"}}}}}).error().code() ==
        ErrorCode::kMissingKey);

  // AddedToken objects give their content; absent and null tokens are left out.
  const ojson config = ojson::parse(R"({"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
      "eos_token": "</s>", "pad_token": null, "additional_special_tokens": ["<a>", {"content": "<b>"}]})");
  CHECK(memfit::chat::special_tokens_context(config).dump() ==
        R"({"bos_token":"<s>","eos_token":"</s>","additional_special_tokens":["<a>","<b>"]})");
}
