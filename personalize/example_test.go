package personalize_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-sendloop/sendloop/personalize"
)

func ExampleRender() {
	// MergeVars as they arrive from JSON: the %KEY% keys keep their percent
	// signs, Mustache names do not.
	var vars map[string]any
	_ = json.Unmarshal([]byte(`{
		"%FIRSTNAME%": "Ada",
		"company": "Babbage & Co <Ltd>",
		"items": [{"name": "Engine", "qty": 2}, {"name": "Loom", "qty": 1.5}],
		"vip": false
	}`), &vars)

	out, err := personalize.Render(
		"Hi %FIRSTNAME%, 50% off at {{company}} ({{{company}}}):\n"+
			"{{#items}}\n"+
			"- {{qty}} x {{name}}\n"+
			"{{/items}}\n"+
			"{{^vip}}Upgrade to VIP!{{/vip}} %UNKNOWN% stays.\n", vars)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out)
	// Output:
	// Hi Ada, 50% off at Babbage &amp; Co &lt;Ltd&gt; (Babbage & Co <Ltd>):
	// - 2 x Engine
	// - 1.5 x Loom
	// Upgrade to VIP! %UNKNOWN% stays.
}

func ExampleParse() {
	// Parse once, render for each recipient; a Template is safe for
	// concurrent use.
	t, err := personalize.Parse("Dear {{name}}, your code is %CODE%.\n")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, vars := range []map[string]any{
		{"name": "Ada", "%CODE%": "A-1"},
		{"name": "Charles", "%CODE%": 42},
	} {
		if err := t.Execute(os.Stdout, vars); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// Dear Ada, your code is A-1.
	// Dear Charles, your code is 42.
}

func ExampleParseWithPartials() {
	t, err := personalize.ParseWithPartials("<div>\n  {{>signature}}\n</div>\n", map[string]string{
		"signature": "<p>{{sender}}</p>\n<p>%COMPANY%</p>\n",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := t.Render(map[string]any{"sender": "Ada", "%COMPANY%": "Sendloop"})
	fmt.Print(out)
	// Output:
	// <div>
	//   <p>Ada</p>
	//   <p>Sendloop</p>
	// </div>
}

func ExampleSyntaxError() {
	_, err := personalize.Render("Hello {{#items}}\n{{name}}\n", nil)
	fmt.Println(err)
	// Output:
	// personalize: syntax error at line 1, col 7: unclosed section "items"
}
