// Package personalize renders Sendloop message templates locally, applying
// the two tag styles of the service to a recipient's MergeVars: classic
// %KEY% merge tags and Mustache.
//
//	out, err := personalize.Render("Hi %FIRSTNAME%, {{#vip}}welcome back{{/vip}}!", vars)
//
// MergeVars is a JSON object of name-to-value pairs; vars is that object as
// a map[string]any, typically straight from encoding/json.
//
// # Merge tags
//
// %KEY% is replaced by vars["%KEY%"]: the map key includes the percent
// signs. Only a non-empty name made of A-Z, a-z, 0-9 and _ between two
// percent signs is a tag, and names are case-sensitive. A tag whose key is
// not in vars is left exactly as written, so "50% off", "100%" and "%%"
// survive. When candidates overlap, as in "%A%B%", the leftmost one whose key
// is present wins, which is what a strings.Replacer over the vars keys would
// do.
//
// Decisions the service leaves open:
//
//   - Merge values are inserted as-is, never HTML-escaped, as classic merge
//     tags always were. Use {{NAME}} for a value that must be escaped.
//   - Merge tags are looked up in the top-level vars only, even inside a
//     Mustache section: they are global to the message.
//   - Merge tags are recognised in the literal text of the template and of
//     its partials, not inside Mustache tags or comments. {{%KEY%}} is thus
//     an ordinary Mustache lookup of the name "%KEY%", and after a delimiter
//     change such as {{=% %=}}, %NAME% is a Mustache tag.
//
// # Mustache
//
// The Mustache dialect is the one of the Mustache specification (v1.x core
// modules): {{name}} is HTML-escaped, {{{name}}} and {{& name}} are raw;
// sections {{#name}}...{{/name}} render when the value is truthy, iterate
// over lists and push maps onto the context stack; inverted sections
// {{^name}}...{{/name}} render when it is falsey; comments {{! ... }}; set
// delimiters {{=<% %>=}}; dotted names a.b.c; the implicit iterator {{.}};
// and the standalone-line rules, so that a line holding only a section,
// comment, partial or delimiter tag leaves no blank line behind. It passes
// every test of the specification's interpolation, sections, inverted,
// comments, delimiters and partials suites. Lambdas, and the optional
// inheritance and dynamic-names modules, are not supported.
//
// Escaping replaces & < > " and ' with &amp; &lt; &gt; &quot; &#39;. The
// specification names the first four; the single quote is escaped too so
// that a value is also safe in a single-quoted HTML attribute.
//
// # Order of processing
//
// There is a single pass. The template is parsed once into a tree of
// literal text, Mustache tags and the positions of %KEY% candidates in the
// literal text; rendering then writes each piece. A value inserted by either
// style is written out and never looked at again, so a subscriber whose name
// is "{{secret}}" or "%COUPON%" gets exactly that text in the message: there
// is no template injection in either direction.
//
// # Values
//
// Values are what encoding/json produces (map[string]any, []any, string,
// float64, bool, nil, and json.Number with Decoder.UseNumber) and the usual
// Go types: all integer and float types, named types based on them, []byte
// (as a string), slices and arrays of anything, maps with string keys, and
// pointers to any of these. They are printed as follows:
//
//   - nil, and a nil pointer, print nothing.
//   - Numbers print as JSON would: 85, not 85.000000; 1.21, not 1.2100000000000002;
//     1e+21 for very large and 1e-7 for very small values. A json.Number with
//     a fraction or exponent is normalised the same way ("1.210" prints
//     1.21); an integer json.Number is printed verbatim, exact beyond 2^53.
//   - Booleans print true or false.
//   - A value with a String method (fmt.Stringer) prints that.
//   - Lists, maps and structs print as compact JSON, then escaped like any
//     other text for {{ }}; values JSON cannot encode (functions,
//     channels, cycles) print nothing.
//
// Struct fields are not looked up by name: pass maps, or round-trip structs
// through encoding/json first.
//
// Section truthiness follows JavaScript, as mustache.js does, since
// templates are often written for it: nil, false, 0, NaN, "", an empty list
// and a nil map are falsey; everything else, including an empty map, is
// truthy.
//
// # Partials
//
// {{>name}} includes a partial template given to ParseWithPartials; it is
// rendered with the current context, and a standalone partial tag indents
// every line of the partial, as the specification requires. A partial that
// was not supplied renders as the empty string. Render and Parse supply no
// partials.
//
// # Errors and limits
//
// A malformed template (unclosed tag or section, mismatched section close,
// empty or invalid tag name, bad delimiter change) fails to parse with a
// *SyntaxError giving the line and column of the offending tag. Rendering
// never panics on any template. Since Go cannot recover from a stack
// overflow, sections may nest at most 256 deep (a SyntaxError) and partials
// at most 100 deep when rendering (an error): a partial that includes
// itself without a section that eventually becomes falsey hits that limit.
// The output is not bounded otherwise: nested sections over long lists can
// render a very large message, as in any Mustache engine.
//
// # Performance
//
// Parse once and render many times: a *Template is immutable and safe for
// concurrent use, rendering reuses pooled buffers, and Template.Execute
// allocates nothing in the common case. Render parses on every call; in the
// package benchmark (a 2 KB HTML email) that is still no slower than building
// a strings.Replacer per recipient for the merge tags alone.
package personalize
