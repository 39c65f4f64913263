package legacy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
)

const sampleChart = `<?xml version="1.0" encoding="UTF-8"?>
<data>
  <tooltip>Activity of list L</tooltip>
  <xaxis><xaxislabel>2025-03-09</xaxislabel><xaxislabel>2025-03-10</xaxislabel></xaxis>
  <yaxis>Subscribers</yaxis>
  <series>
    <set label="Subscription">
      <serie><value>0</value><tooltip>0 subscriptions on 2025-03-09</tooltip></serie>
      <serie><value>2</value><tooltip>2 subscriptions on 2025-03-10</tooltip></serie>
    </set>
    <set label="Unsubscription">
      <serie><value>0</value><tooltip>0 unsubscriptions on 2025-03-09</tooltip></serie>
      <serie><value>1</value><tooltip>1 unsubscription on 2025-03-10</tooltip></serie>
    </set>
  </series>
</data>`

func TestParseChart(t *testing.T) {
	t.Parallel()
	chart, err := legacy.ParseChart([]byte(sampleChart))
	require.NoError(t, err)
	assert.Equal(t, &legacy.Chart{
		Tooltip: "Activity of list L",
		XAxis:   legacy.Axis{Labels: []string{"2025-03-09", "2025-03-10"}},
		YAxis:   legacy.Axis{Title: "Subscribers"},
		Series: []legacy.Series{
			{Label: "Subscription", Points: []legacy.Point{
				{Value: 0, Tooltip: "0 subscriptions on 2025-03-09"}, {Value: 2, Tooltip: "2 subscriptions on 2025-03-10"}}},
			{Label: "Unsubscription", Points: []legacy.Point{
				{Value: 0, Tooltip: "0 unsubscriptions on 2025-03-09"}, {Value: 1, Tooltip: "1 unsubscription on 2025-03-10"}}},
		},
	}, chart)
	assert.Equal(t, []float64{0, 2}, chart.Subscriptions().Values())
	assert.Equal(t, []float64{0, 1}, chart.Unsubscriptions().Values())
	_, ok := chart.Set("Bounces")
	assert.False(t, ok)
}

func TestParseChartTolerance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want *legacy.Chart
	}{
		{"empty chart", `<data/>`, &legacy.Chart{}},
		{"label as a child, value and tooltip as attributes",
			`<data><series><set><label>Subscription</label><serie value="3" tooltip="three"/></set></series></data>`,
			&legacy.Chart{Series: []legacy.Series{{Label: "Subscription", Points: []legacy.Point{{Value: 3, Tooltip: "three"}}}}}},
		{"value as the serie's text, empty value is 0",
			`<data><set label="Unsubscription"><serie> 1.5 </serie><serie><value/></serie></set></data>`,
			&legacy.Chart{Series: []legacy.Series{{Label: "Unsubscription", Points: []legacy.Point{{Value: 1.5}, {Value: 0}}}}}},
		{"axis titles as attributes and labels of any name",
			`<data><xaxis title="Day"><label>a</label></xaxis><yaxis title="Count"><yaxislabel>0</yaxislabel><yaxislabel>10</yaxislabel></yaxis><extra>x</extra></data>`,
			&legacy.Chart{XAxis: legacy.Axis{Title: "Day", Labels: []string{"a"}}, YAxis: legacy.Axis{Title: "Count", Labels: []string{"0", "10"}}}},
		{"ISO-8859-1 document",
			"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><data><tooltip>caf\xe9</tooltip></data>",
			&legacy.Chart{Tooltip: "café"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			chart, err := legacy.ParseChart([]byte(tt.doc))
			require.NoError(t, err)
			assert.Equal(t, tt.want, chart)
		})
	}
}

func TestParseChartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"empty", ``, "malformed chart document"},
		{"other root", `<chart/>`, "malformed chart document"},
		{"broken XML", `<data><tooltip></data>`, "malformed chart document"},
		{"value not a number", `<data><series><set label="Subscription"><serie><value>many</value></serie></set></series></data>`,
			"set 1, point 1: the value is not a number"},
		{"infinite value", `<data><series><set><serie><value>1</value></serie><serie><value>Inf</value></serie></set></series></data>`,
			"set 1, point 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := legacy.ParseChart([]byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
