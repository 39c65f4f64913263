package smtp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/smtp"
)

type recordingMessageObserver struct {
	mu     sync.Mutex
	events []smtp.MessageEvent
}

func (o *recordingMessageObserver) MessageSent(_ context.Context, m smtp.MessageEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, m)
}

func TestMessageObserverSeesEachMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		msg         *smtp.Message
		wantOutcome string
		wantRcpts   int
		wantReply   int
	}{
		{name: "delivered", msg: personalizedMessage(), wantOutcome: smtp.OutcomeDelivered, wantRcpts: 4, wantReply: 250},
		{name: "invalid", msg: &smtp.Message{From: "shop@example.com"}, wantOutcome: smtp.OutcomeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t)
			obs := &recordingMessageObserver{}
			client := newClient(t, fake, testPassword, nil, smtp.WithMessageObserver(obs))
			_, _ = client.Send(testContext(t), tt.msg)
			require.Len(t, obs.events, 1)
			ev := obs.events[0]
			assert.Equal(t, tt.wantOutcome, ev.Outcome)
			assert.Equal(t, tt.wantRcpts, ev.Recipients)
			assert.Equal(t, tt.wantRcpts, ev.Accepted)
			assert.Equal(t, tt.wantReply, ev.ReplyCode)
			assert.False(t, ev.End.Before(ev.Start))
			if tt.wantOutcome == smtp.OutcomeDelivered {
				assert.Positive(t, ev.Size)
				assert.Equal(t, 1, ev.Attempts)
			}
			printed := fmt.Sprintf("%+v", obs.events)
			assert.NotContains(t, printed, testPassword)
			assert.NotContains(t, printed, "@")
		})
	}
}
