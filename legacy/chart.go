package legacy

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// The series labels of the list activity chart.
const (
	// SeriesSubscription labels the set of subscriptions per day.
	SeriesSubscription = "Subscription"
	// SeriesUnsubscription labels the set of unsubscriptions per day.
	SeriesUnsubscription = "Unsubscription"
)

// ChartMember is the member of the Chart.ListActivity answer that holds the chart
// document, as this package and sendlooptest write it.
const ChartMember = "Chart"

// DefaultMaxChartDays is the default bound of ChartListActivityParams.Days: ten years of days.
// The specification shows no bound; this one keeps an absurd request from being sent, and
// WithMaxChartDays changes it.
const DefaultMaxChartDays = 3660

// ChartListActivityParams are the parameters of Chart.ListActivity.
type ChartListActivityParams struct {
	// Start is the first day of the chart: its date in its own location is sent, as
	// 'YYYY-MM-DD' (required).
	Start time.Time
	// Days is how many days the chart covers from Start, Start included (1 to the
	// client's maximum: DefaultMaxChartDays unless WithMaxChartDays says otherwise).
	Days int
}

// Chart is a chart document of the legacy API: data > tooltip, xaxis (xaxislabel), yaxis,
// series > set > serie (value, tooltip).
type Chart struct {
	// Tooltip is the chart's own tooltip.
	Tooltip string
	// XAxis holds the labels of the x axis, one per point: the days of a list activity chart.
	XAxis Axis
	// YAxis describes the y axis.
	YAxis Axis
	// Series are the chart's sets, in document order.
	Series []Series
}

// Axis is an axis of a Chart: its title (the element's own text, or its title attribute)
// and its labels (the text of its child elements, xaxislabel for the x axis).
type Axis struct {
	Title  string   // the title attribute, or else the element's own text; trimmed
	Labels []string // the trimmed texts of the child elements, in document order
}

// Series is a set of a Chart: its label and its points.
type Series struct {
	// Label names the set, e.g. SeriesSubscription.
	Label string
	// Points are the set's serie elements, one per x axis label.
	Points []Point
}

// Point is a serie of a Chart's set: a value and its tooltip.
type Point struct {
	Value   float64 // the serie's value (child, attribute or own text); an empty one is 0
	Tooltip string  // the serie's tooltip (child or attribute), "" when it has none
}

// Set returns the series labelled label, and whether the chart has one.
func (c *Chart) Set(label string) (Series, bool) {
	for _, s := range c.Series {
		if s.Label == label {
			return s, true
		}
	}
	return Series{}, false
}

// Subscriptions returns the 'Subscription' series, empty when the chart has none.
func (c *Chart) Subscriptions() Series {
	s, _ := c.Set(SeriesSubscription)
	return s
}

// Unsubscriptions returns the 'Unsubscription' series, empty when the chart has none.
func (c *Chart) Unsubscriptions() Series {
	s, _ := c.Set(SeriesUnsubscription)
	return s
}

// Values returns the series' values in order.
func (s Series) Values() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Value
	}
	return out
}

// validate requires a Start and 1 to maxDays Days (no upper bound when maxDays is negative).
func (p ChartListActivityParams) validate(cmd string, maxDays int) error {
	switch {
	case p.Start.IsZero():
		return invalid(cmd, 0, "Start", "Start is required")
	case p.Days < 1:
		return invalid(cmd, 0, "Days", "Days must be at least 1")
	case maxDays >= 0 && p.Days > maxDays:
		return invalid(cmd, 0, "Days", fmt.Sprintf("Days must be at most %d (WithMaxChartDays)", maxDays))
	}
	return nil
}

// ChartListActivity returns a list's subscriptions and unsubscriptions per day as a chart
// (Chart.ListActivity). The answer may be an XML-RPC struct whose Chart member (or, failing
// that, first member holding a document) is the chart document, or the chart document
// itself. A list ID that cannot exist (3), a zero Start and Days under 1 fail before
// anything is sent. The command is a read.
func (c *Client) ChartListActivity(ctx context.Context, listID int, p ChartListActivityParams) (_ *Chart, err error) {
	const cmd = CommandChartListActivity
	if err := checkListID(cmd, listID); err != nil {
		return nil, err
	}
	if err := p.validate(cmd, c.maxChartDays); err != nil {
		return nil, err
	}
	form := url.Values{
		"ListID": {strconv.Itoa(listID)},
		"Start":  {p.Start.Format("2006-01-02")},
		"Days":   {strconv.Itoa(p.Days)},
	}
	resp, err := c.send(ctx, cmd, commands.LegacyClassOf(cmd), form)
	if err != nil {
		return nil, err
	}
	defer func() { c.transport.Ended(resp, err) }()
	if rootName(resp.Body) == "data" && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		chart, err := ParseChart(resp.Body)
		if err != nil {
			return nil, c.httpError(cmd, resp, err.Error())
		}
		return chart, nil
	}
	v, err := c.decode(resp.Body)
	st, err := c.answer(cmd, resp, v, err)
	if err != nil {
		return nil, err
	}
	doc, ok := st.Get(ChartMember)
	if !ok {
		for _, m := range st {
			if m.Value.Kind() == KindString && strings.HasPrefix(strings.TrimSpace(m.Value.Text()), "<") {
				doc, ok = m.Value, true
				break
			}
		}
	}
	if !ok {
		return nil, c.httpError(cmd, resp, "the answer holds no chart document")
	}
	chart, err := ParseChart([]byte(doc.Text()))
	if err != nil {
		return nil, c.httpError(cmd, resp, err.Error())
	}
	return chart, nil
}

// rootName returns the local name of a document's root element, or "".
func rootName(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charsetReader
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if el, ok := tok.(xml.StartElement); ok {
			return el.Name.Local
		}
	}
}

type chartXML struct {
	XMLName xml.Name `xml:"data"`
	Tooltip string   `xml:"tooltip"`
	XAxis   axisXML  `xml:"xaxis"`
	YAxis   axisXML  `xml:"yaxis"`
	Sets    []setXML `xml:"series>set"`
	Bare    []setXML `xml:"set"` // sets written without the series wrapper
}

type axisXML struct {
	Title  string    `xml:"title,attr"`
	Text   string    `xml:",chardata"`
	Labels []anyNode `xml:",any"`
}

type setXML struct {
	LabelAttr string     `xml:"label,attr"`
	Label     string     `xml:"label"`
	Points    []serieXML `xml:"serie"`
}

type serieXML struct {
	ValueAttr   string `xml:"value,attr"`
	Value       string `xml:"value"`
	TooltipAttr string `xml:"tooltip,attr"`
	Tooltip     string `xml:"tooltip"`
	Text        string `xml:",chardata"`
}

type anyNode struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
}

// ParseChart reads a chart document:
//
//	<data>
//	  <tooltip>…</tooltip>
//	  <xaxis><xaxislabel>2025-01-01</xaxislabel>…</xaxis>
//	  <yaxis>…</yaxis>
//	  <series>
//	    <set label="Subscription"><serie><value>3</value><tooltip>…</tooltip></serie>…</set>
//	    <set label="Unsubscription">…</set>
//	  </series>
//	</data>
//
// It is tolerant: a set's label may be an attribute or a <label> child, a serie's value and
// tooltip attributes or children (or the value the serie's own text), sets may stand
// without the <series> wrapper, an empty value is 0, unknown elements are ignored and
// texts are trimmed. The root must be <data>; <data/> is an empty chart.
func ParseChart(doc []byte) (*Chart, error) {
	d := xml.NewDecoder(bytes.NewReader(wire.ValidXML(doc)))
	d.CharsetReader = charsetReader
	var raw chartXML
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("sendloop/legacy: malformed chart document: %w", err)
	}
	chart := &Chart{
		Tooltip: strings.TrimSpace(raw.Tooltip),
		XAxis:   raw.XAxis.axis(),
		YAxis:   raw.YAxis.axis(),
	}
	for i, set := range append(raw.Sets, raw.Bare...) {
		s := Series{Label: strings.TrimSpace(set.LabelAttr)}
		if s.Label == "" {
			s.Label = strings.TrimSpace(set.Label)
		}
		for _, p := range set.Points {
			text := firstNonEmpty(p.Value, p.ValueAttr, p.Text)
			value, err := parseNumber(text)
			if err != nil {
				return nil, fmt.Errorf("sendloop/legacy: chart set %d, point %d: the value is not a number", i+1, len(s.Points)+1)
			}
			s.Points = append(s.Points, Point{Value: value, Tooltip: firstNonEmpty(p.Tooltip, p.TooltipAttr)})
		}
		chart.Series = append(chart.Series, s)
	}
	return chart, nil
}

func (a axisXML) axis() Axis {
	out := Axis{Title: strings.TrimSpace(a.Title)}
	if out.Title == "" {
		out.Title = strings.TrimSpace(a.Text)
	}
	for _, l := range a.Labels {
		out.Labels = append(out.Labels, strings.TrimSpace(l.Text))
	}
	return out
}

func firstNonEmpty(texts ...string) string {
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			return t
		}
	}
	return ""
}
