package mcp

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPendingCalls(t *testing.T) {
	t.Run("responses reach their calls and the count follows", func(t *testing.T) {
		var p pendingCalls
		calls := map[uint64]*pendingCall{}
		for id := uint64(1); id <= 3*pendingShards; id++ {
			pc, err := p.add(id)
			require.NoError(t, err)
			calls[id] = pc
		}
		assert.Equal(t, 3*pendingShards, p.count())
		ok, waiting := p.deliver(5, reply{result: []byte(`{"n":5}`)})
		assert.True(t, ok)
		assert.Equal(t, 3*pendingShards-1, waiting)
		assert.Equal(t, `{"n":5}`, string((<-calls[5].ch).result))
		ok, _ = p.deliver(5, reply{})
		assert.False(t, ok, "a duplicate response is not delivered")
		ok, _ = p.deliver(999, reply{})
		assert.False(t, ok, "an unknown id is not delivered")
		assert.True(t, p.remove(6))
		assert.False(t, p.remove(6))
		assert.Equal(t, 3*pendingShards-2, p.count())
	})
	t.Run("fail ends the calls of every shard and refuses new ones", func(t *testing.T) {
		var p pendingCalls
		var calls []*pendingCall
		for id := uint64(1); id <= 2*pendingShards; id++ {
			pc, err := p.add(id)
			require.NoError(t, err)
			calls = append(calls, pc)
		}
		end := errors.New("ended")
		p.fail(end)
		for i, pc := range calls {
			select {
			case r := <-pc.ch:
				assert.ErrorIs(t, r.err, end, "call %d", i+1)
			default:
				t.Errorf("call %d was not failed", i+1)
			}
		}
		assert.Zero(t, p.count())
		assert.True(t, p.ended())
		for id := uint64(100); id < 100+pendingShards; id++ {
			_, err := p.add(id)
			assert.ErrorIs(t, err, end, "id %d", id)
		}
	})
}
