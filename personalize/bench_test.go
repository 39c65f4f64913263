package personalize_test

import (
	"io"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/personalize"
)

// benchEmail is a realistic ~2 KB transactional HTML email with ten tags of
// both styles, one of them a section over three order lines.
const benchEmail = `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>Your order %ORDER_ID% has shipped</title>
<style>
  body { font-family: Helvetica, Arial, sans-serif; color: #333333; margin: 0; padding: 0; }
  .wrapper { width: 100%; max-width: 600px; margin: 0 auto; background: #ffffff; }
  .header { background: #1a73e8; color: #ffffff; padding: 24px; font-size: 20px; }
  .content { padding: 24px; line-height: 1.5; font-size: 15px; }
  .items td { padding: 6px 12px; border-bottom: 1px solid #eeeeee; }
  .footer { padding: 16px 24px; font-size: 12px; color: #888888; }
  a.button { display: inline-block; padding: 10px 18px; background: #1a73e8; color: #fff; text-decoration: none; border-radius: 4px; }
</style>
</head>
<body>
<div class="wrapper">
  <div class="header">Good news, %FIRSTNAME%!</div>
  <div class="content">
    <p>Hi {{customer.name}},</p>
    <p>Your order <strong>%ORDER_ID%</strong> placed on {{order_date}} is on its way. It was packed
    with care at our warehouse and handed to the carrier this morning. You can follow its journey
    at any time with the tracking link below; updates usually appear within a few hours.</p>
    <table class="items" cellpadding="0" cellspacing="0">
      {{#items}}
      <tr><td>{{name}}</td><td>{{qty}}</td><td>{{price}}</td></tr>
      {{/items}}
    </table>
    <p>Total charged to your card: <strong>{{total}}</strong></p>
    <p><a class="button" href="{{tracking_url}}">Track my parcel</a></p>
    <p>If anything is wrong with your order, simply reply to this email and our support team will
    get back to you within one business day. We are always happy to help.</p>
    <p>Returns are free for 30 days: print the prepaid label from your account page, attach it to
    the original box and drop it at any post office.</p>
  </div>
  <div class="footer">
    You receive this email because you bought something at Example Store.
    Example Store Ltd, 12 High Street, London, United Kingdom.
    <a href="https://example.com/unsubscribe?u=%SUBSCRIBER_ID%">Unsubscribe</a>
  </div>
</div>
</body>
</html>
`

// benchMergeEmail is the same email with the ten tags written as %KEY%
// merge tags only, so that strings.Replacer can render it as a baseline.
var benchMergeEmail = strings.NewReplacer(
	"{{customer.name}}", "%CUSTOMER_NAME%",
	"{{order_date}}", "%ORDER_DATE%",
	"{{total}}", "%TOTAL%",
	"{{tracking_url}}", "%TRACKING_URL%",
	"      {{#items}}\n", "",
	"      {{/items}}\n", "",
	"{{name}}", "%ITEM_NAME%",
	"{{qty}}", "%ITEM_QTY%",
	"{{price}}", "%ITEM_PRICE%",
).Replace(benchEmail)

func benchVars() map[string]any {
	return map[string]any{
		"%FIRSTNAME%":     "Ada",
		"%ORDER_ID%":      "A-10442",
		"%SUBSCRIBER_ID%": "8f3a9c21",
		"customer":        map[string]any{"name": "Ada Lovelace"},
		"order_date":      "21 November 2025",
		"total":           "£128.50",
		"tracking_url":    "https://track.example.com/?id=1Z999&lang=en",
		"items": []any{
			map[string]any{"name": "Analytical Engine <mini>", "qty": 1.0, "price": "£99.00"},
			map[string]any{"name": "Punched cards", "qty": 200.0, "price": "£19.50"},
			map[string]any{"name": "Gift wrap", "qty": 1.0, "price": "£10.00"},
		},
	}
}

func benchMergeVars() map[string]string {
	return map[string]string{
		"%FIRSTNAME%": "Ada", "%ORDER_ID%": "A-10442", "%SUBSCRIBER_ID%": "8f3a9c21",
		"%CUSTOMER_NAME%": "Ada Lovelace", "%ORDER_DATE%": "21 November 2025", "%TOTAL%": "£128.50",
		"%TRACKING_URL%": "https://track.example.com/?id=1Z999&lang=en",
		"%ITEM_NAME%":    "Analytical Engine", "%ITEM_QTY%": "1", "%ITEM_PRICE%": "£99.00",
	}
}

// BenchmarkRender compares rendering the email with this package against a
// strings.Replacer doing the %KEY% substitutions only.
func BenchmarkRender(b *testing.B) {
	vars := benchVars()
	mergeVars := benchMergeVars()
	mergeAny := make(map[string]any, len(mergeVars))
	pairs := make([]string, 0, 2*len(mergeVars))
	for k, v := range mergeVars {
		mergeAny[k] = v
		pairs = append(pairs, k, v)
	}
	for _, s := range []string{benchEmail, benchMergeEmail} {
		if len(s) < 1900 || len(s) > 2600 {
			b.Fatalf("benchmark email has %d bytes, want about 2 KB", len(s))
		}
	}
	tmpl, err := personalize.Parse(benchEmail)
	if err != nil {
		b.Fatal(err)
	}
	mergeTmpl, err := personalize.Parse(benchMergeEmail)
	if err != nil {
		b.Fatal(err)
	}
	// Both renderers must agree on the merge-only email.
	want := strings.NewReplacer(pairs...).Replace(benchMergeEmail)
	if got, err := personalize.Render(benchMergeEmail, mergeAny); err != nil || got != want {
		b.Fatalf("Render disagrees with strings.Replacer: %v", err)
	}

	run := func(name string, size int, f func() (string, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if _, err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The baseline builds its Replacer per recipient, as vars differ.
	run("baseline/strings.Replacer", len(benchMergeEmail), func() (string, error) {
		return strings.NewReplacer(pairs...).Replace(benchMergeEmail), nil
	})
	run("merge-only/Render", len(benchMergeEmail), func() (string, error) {
		return personalize.Render(benchMergeEmail, mergeAny)
	})
	run("merge-only/Template.Render", len(benchMergeEmail), func() (string, error) {
		return mergeTmpl.Render(mergeAny)
	})
	run("mixed/Render", len(benchEmail), func() (string, error) {
		return personalize.Render(benchEmail, vars)
	})
	run("mixed/Template.Render", len(benchEmail), func() (string, error) {
		return tmpl.Render(vars)
	})
	run("mixed/Template.Execute", len(benchEmail), func() (string, error) {
		return "", tmpl.Execute(io.Discard, vars)
	})
}

func TestBenchEmailRenders(t *testing.T) {
	t.Parallel()
	got, err := personalize.Render(benchEmail, benchVars())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Good news, Ada!", "Hi Ada Lovelace,", "<strong>A-10442</strong>",
		"<tr><td>Analytical Engine &lt;mini&gt;</td><td>1</td><td>£99.00</td></tr>\n      <tr><td>Punched cards</td><td>200</td>",
		`href="https://track.example.com/?id=1Z999&amp;lang=en"`, "width: 100%; max-width", "u=8f3a9c21",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered email lacks %q", want)
		}
	}
	if strings.Contains(got, "{{") || strings.Contains(got, "%FIRSTNAME%") {
		t.Errorf("rendered email has tags left:\n%s", got)
	}
	if n := len(benchEmail); n < 2000 || n > 2600 {
		t.Errorf("benchmark email is %d bytes, want about 2 KB", n)
	}
}
