package sendloop

import (
	"testing"

	"github.com/go-sendloop/sendloop/internal/transport"
)

func TestClassOf(t *testing.T) {
	t.Parallel()
	tests := map[string]transport.Class{
		"list.create": transport.OneShot, "Campaign.Create": transport.OneShot,
		"customfield.add": transport.OneShot, "segment.create": transport.OneShot, "something.new": transport.OneShot,
		"suppression.list.add": transport.Idempotent, "subscriber.import": transport.Idempotent,
		"campaign.delete": transport.Idempotent, "list.settings.update": transport.Idempotent,
		"list.get": transport.Read, "list.getlist": transport.Read, "subscriber.browse": transport.Read,
		"report.campaign.opens": transport.Read, "System.SystemDate.Get": transport.Read, "export.bounces": transport.Read,
		"customfield.getlist": transport.Read,
	}
	for command, want := range tests {
		if got := classOf(command); got != want {
			t.Errorf("classOf(%q) = %v, want %v", command, got, want)
		}
	}
}
