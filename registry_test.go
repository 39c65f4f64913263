package sendloop_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// legacyCalls has one call of every legacy command of the registry that the fake simulates,
// on the world's legacy client: the typed method for the five the specification details,
// Call for the functions it lists without detail.
var legacyCalls = map[string]func(context.Context, *writeWorld) error{
	legacy.CommandSubscriberAdd: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.SubscriberAdd(ctx, w.listID, legacy.SubscriberAddParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		return err
	},
	legacy.CommandSubscriberUnsubscribe: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.SubscriberUnsubscribe(ctx, w.listID, legacy.SubscriberUnsubscribeParams{EmailAddress: w.member, UnsubscriptionIP: "192.0.2.1"})
		return err
	},
	legacy.CommandChartListActivity: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.ChartListActivity(ctx, w.listID, legacy.ChartListActivityParams{Start: time.Now(), Days: 3})
		return err
	},
	legacy.CommandMediaUpload: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("GIF89a"), MediaType: "image/gif"})
		return err
	},
	legacy.CommandMediaBrowse: func(ctx context.Context, w *writeWorld) error { _, err := w.lc.MediaBrowse(ctx); return err },
	commands.LegacySubscriberGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.Call(ctx, commands.LegacySubscriberGet, map[string]string{"ListID": strconv.Itoa(w.listID), "EmailAddress": w.member})
		return err
	},
	commands.LegacySubscribersGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.Call(ctx, commands.LegacySubscribersGet, map[string]string{"ListID": strconv.Itoa(w.listID)})
		return err
	},
	commands.LegacySubscriberUpdate: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.Call(ctx, commands.LegacySubscriberUpdate, map[string]string{"ListID": strconv.Itoa(w.listID),
			"EmailAddress": w.member, "Fields[CustomField" + strconv.Itoa(w.field) + "]": "x"})
		return err
	},
	commands.LegacySubscriberDelete: func(ctx context.Context, w *writeWorld) error {
		_, err := w.lc.Call(ctx, commands.LegacySubscriberDelete, map[string]string{"ListID": strconv.Itoa(w.listID), "EmailAddress": w.member})
		return err
	},
}

// fuzzTargets names, for every command of the registry, the fuzz targets that cover the
// decoding of its answer. The convention: FuzzTypedAnswers feeds any body to every v3 and
// person command through its typed method (typedCalls); a record type's own decoder has a
// Fuzz<Type>Unmarshal target (decode, encode, decode again: stable), listed beside it.
// Every legacy answer goes through the XML-RPC decoder, fuzzed by legacy's FuzzDecode. The
// test checks that each named target exists.
var fuzzTargets = map[string][]string{
	commands.AccountInfoGet:                {"FuzzTypedAnswers", "FuzzAccountInfoUnmarshal", "FuzzDecodeEnvelope"},
	commands.AccountInfoUpdate:             {"FuzzTypedAnswers"},
	commands.ListCreate:                    {"FuzzTypedAnswers"},
	commands.ListUpdate:                    {"FuzzTypedAnswers"},
	commands.ListGet:                       {"FuzzTypedAnswers", "FuzzListUnmarshal", "FuzzCustomFieldUnmarshal"},
	commands.ListGetList:                   {"FuzzTypedAnswers", "FuzzListUnmarshal"},
	commands.ListSettingsGet:               {"FuzzTypedAnswers"},
	commands.ListSettingsUpdate:            {"FuzzTypedAnswers"},
	commands.SubscriberBrowse:              {"FuzzTypedAnswers", "FuzzSubscriberUnmarshal"},
	commands.SubscriberGet:                 {"FuzzTypedAnswers", "FuzzSubscriberUnmarshal"},
	commands.SubscriberSearch:              {"FuzzTypedAnswers", "FuzzSubscriberSearchResultUnmarshal"},
	commands.SubscriberImport:              {"FuzzTypedAnswers"},
	commands.SubscriberSubscribe:           {"FuzzTypedAnswers"},
	commands.SubscriberUnsubscribe:         {"FuzzTypedAnswers"},
	commands.SubscriberUpdate:              {"FuzzTypedAnswers"},
	commands.SuppressionListGetList:        {"FuzzTypedAnswers"},
	commands.SuppressionListGet:            {"FuzzTypedAnswers"},
	commands.SuppressionListAdd:            {"FuzzTypedAnswers"},
	commands.CampaignCreate:                {"FuzzTypedAnswers"},
	commands.CampaignGet:                   {"FuzzTypedAnswers", "FuzzDateTimeUnmarshal"},
	commands.CampaignUpdate:                {"FuzzTypedAnswers"},
	commands.CampaignDelete:                {"FuzzTypedAnswers"},
	commands.ReportListOverall:             {"FuzzTypedAnswers", "FuzzOverallReportsUnmarshal"},
	commands.ReportCampaignOverall:         {"FuzzTypedAnswers", "FuzzOverallReportsUnmarshal"},
	commands.ReportCampaignWebBrowserViews: {"FuzzTypedAnswers", "FuzzDailySeriesUnmarshal"},
	commands.ReportCampaignUnsubscriptions: {"FuzzTypedAnswers", "FuzzDailySeriesUnmarshal"},
	commands.ReportCampaignOpens:           {"FuzzTypedAnswers", "FuzzDailySeriesUnmarshal"},
	commands.ReportCampaignForwards:        {"FuzzTypedAnswers", "FuzzDailySeriesUnmarshal"},
	commands.ReportCampaignOpenLocations:   {"FuzzTypedAnswers", "FuzzGroupedCountsUnmarshal"},
	commands.ReportCampaignEmailClients:    {"FuzzTypedAnswers", "FuzzGroupedCountsUnmarshal"},
	commands.ReportCampaignBounces:         {"FuzzTypedAnswers"},
	commands.ReportCampaignSpamComplaints:  {"FuzzTypedAnswers", "FuzzSpamComplaintStatsUnmarshal"},
	commands.DataCampaignUnsubscriptions:   {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignOpenLocations:     {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignForwards:          {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignBrowserViews:      {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignEmailOpens:        {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignLinkClicks:        {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.DataCampaignBounces:           {"FuzzTypedAnswers", "FuzzCampaignDataRecordsUnmarshal"},
	commands.ExportUnsubscriptions:         {"FuzzTypedAnswers"},
	commands.ExportSuppressionList:         {"FuzzTypedAnswers"},
	commands.ExportSpamComplaints:          {"FuzzTypedAnswers"},
	commands.ExportBounces:                 {"FuzzTypedAnswers"},
	commands.SystemSystemDateGet:           {"FuzzTypedAnswers", "FuzzDateTimeUnmarshal"},
	commands.SystemTimeZonesGet:            {"FuzzTypedAnswers", "FuzzDecodeTimeZones"},
	commands.PersonTrack:                   {"FuzzTypedAnswers"},
	commands.PersonGet:                     {"FuzzTypedAnswers"},
	commands.PersonDelete:                  {"FuzzTypedAnswers"},

	legacy.CommandSubscriberAdd:         {"legacy.FuzzDecode"},
	legacy.CommandSubscriberUnsubscribe: {"legacy.FuzzDecode"},
	legacy.CommandChartListActivity:     {"legacy.FuzzDecode", "legacy.FuzzParseChart"},
	legacy.CommandMediaUpload:           {"legacy.FuzzDecode"},
	legacy.CommandMediaBrowse:           {"legacy.FuzzDecode"},
}

// fuzzFunctions returns the fuzz targets of the root and legacy packages' test files, the
// legacy ones as legacy.FuzzX.
func fuzzFunctions(t *testing.T) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	for dir, prefix := range map[string]string{".": "", "legacy": "legacy."} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		require.NoError(t, err)
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
					found[prefix+fn.Name.Name] = true
				}
			}
		}
	}
	return found
}

// TestRegistryCoverage walks the command registry and fails on any command that lacks what
// adding a command takes: a typed method (typedCalls, legacyCalls) whose call runs the fake's
// handler, a row of the ID table for each of its IDs, a row of the outcome table for a
// write, and a fuzz target for its answer; and on a row of those tables that names a
// command or an ID the registry lacks.
func TestRegistryCoverage(t *testing.T) {
	t.Parallel()
	ids := map[[2]string]bool{}
	for _, tc := range idCasesFromTypedCalls() {
		ids[[2]string{tc.command, tc.id}] = true
	}
	outcomes := map[string]bool{}
	for _, oc := range outcomeCases {
		outcomes[oc.command] = true
	}
	fuzz := fuzzFunctions(t)
	known := map[string]bool{}
	for _, spec := range commands.All() {
		known[spec.Name] = true
		t.Run(spec.API.String()+"/"+spec.Name, func(t *testing.T) {
			t.Parallel()
			calls := typedCalls
			if spec.API == commands.Legacy {
				calls = legacyCalls
			}
			call := calls[spec.Name]
			switch {
			case call == nil && !spec.CallOnly:
				t.Error("no typed method: add it to typedCalls or legacyCalls")
			case call == nil && !spec.Listed:
				t.Error("no call: add it to legacyCalls")
			case call != nil:
				w, srv := newWriteWorld(t)
				before := srv.Executions(spec.Name)
				assert.NoError(t, call(context.Background(), w))
				assert.Greater(t, srv.Executions(spec.Name), before, "the fake's handler ran")
			}
			for _, id := range spec.IDs {
				assert.True(t, ids[[2]string{spec.Name, id.Name}], "no row of the ID table (ids_test.go) for %s", id.Name)
			}
			if spec.Write() && !spec.CallOnly {
				assert.True(t, outcomes[spec.Name], "no row of the outcome table (outcome_test.go)")
			}
			targets := fuzzTargets[spec.Name]
			if spec.CallOnly {
				targets = []string{"legacy.FuzzDecode"} // Call's answer is the decoded XML-RPC struct
			}
			assert.NotEmpty(t, targets, "no fuzz target for the answer: add a row to fuzzTargets")
			for _, name := range targets {
				assert.True(t, fuzz[name], "the fuzz target %s does not exist", name)
			}
		})
	}
	for key := range ids {
		assert.True(t, known[key[0]], "an ID row for %q, which the registry lacks", key[0])
	}
	for command := range outcomes {
		assert.True(t, known[command], "an outcome row for %q, which the registry lacks", command)
	}
	for command := range fuzzTargets {
		assert.True(t, known[command], "a fuzz row for %q, which the registry lacks", command)
	}
	for command := range typedCalls {
		assert.True(t, known[command], "a typed call of %q, which the registry lacks", command)
	}
	for command := range legacyCalls {
		assert.True(t, known[command], "a legacy call of %q, which the registry lacks", command)
	}
}

// TestTypedMethodsRetryByTheRegistrysClass resets the connection after every command of the
// registry with a typed method ran: a read or an idempotent write is sent again (the
// outcome table says how a write's second answer is settled), a one-shot write is not and
// its outcome is unknown.
func TestTypedMethodsRetryByTheRegistrysClass(t *testing.T) {
	t.Parallel()
	for _, spec := range commands.All() {
		calls := typedCalls
		if spec.API == commands.Legacy {
			calls = legacyCalls
		}
		call := calls[spec.Name]
		if call == nil {
			continue // TestRegistryCoverage fails on it
		}
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			w, srv := newWriteWorld(t)
			before := srv.Executions(spec.Name)
			srv.InjectFault(spec.Name, sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})

			err := call(context.Background(), w)

			executions := srv.Executions(spec.Name) - before
			if spec.Class == sendloop.RetryOneShot {
				require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
				assert.Equal(t, 1, executions, "a one-shot write is not sent again")
				return
			}
			assert.Equal(t, 2, executions, "sent again after the reset")
			var legacyErr *legacy.Error
			if spec.CallOnly && spec.Write() && errors.As(err, &legacyErr) {
				// Call settles nothing: the retry's "already done" answer comes back, marked.
				assert.True(t, legacyErr.EarlierAttemptMayHaveRun)
				return
			}
			require.NoError(t, err)
		})
	}
}
