package jsonrpc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPendingCalls(t *testing.T) {
	t.Run("responses reach their calls and the count follows", func(t *testing.T) {
		var p Pending
		calls := map[uint64]*Call{}
		for id := uint64(1); id <= 3*pendingShards; id++ {
			pc, err := p.Add(id)
			require.NoError(t, err)
			calls[id] = pc
		}
		assert.Equal(t, 3*pendingShards, p.Count())
		ok, waiting := p.Deliver(5, Reply{Result: []byte(`{"n":5}`)})
		assert.True(t, ok)
		assert.Equal(t, 3*pendingShards-1, waiting)
		assert.Equal(t, `{"n":5}`, string((<-calls[5].C).Result))
		ok, _ = p.Deliver(5, Reply{})
		assert.False(t, ok, "a duplicate response is not delivered")
		ok, _ = p.Deliver(999, Reply{})
		assert.False(t, ok, "an unknown id is not delivered")
		assert.True(t, p.Remove(6))
		assert.False(t, p.Remove(6))
		assert.Equal(t, 3*pendingShards-2, p.Count())
	})
	t.Run("fail ends the calls of every shard and refuses new ones", func(t *testing.T) {
		var p Pending
		var calls []*Call
		for id := uint64(1); id <= 2*pendingShards; id++ {
			pc, err := p.Add(id)
			require.NoError(t, err)
			calls = append(calls, pc)
		}
		bg, err := p.AddBackground(100)
		require.NoError(t, err)
		calls = append(calls, bg)
		end := errors.New("ended")
		assert.Equal(t, 2*pendingShards, p.Fail(end), "the calls it ended, the background one not counted")
		assert.Zero(t, p.Fail(end), "a second Fail ends none")
		for i, pc := range calls {
			select {
			case r := <-pc.C:
				assert.ErrorIs(t, r.Err, end, "call %d", i+1)
			default:
				t.Errorf("call %d was not failed", i+1)
			}
		}
		assert.Zero(t, p.Count())
		assert.True(t, p.Ended())
		for id := uint64(200); id < 200+pendingShards; id++ {
			_, err := p.Add(id)
			assert.ErrorIs(t, err, end, "id %d", id)
		}
	})
}

// A call released by AddBackground and taken again by Add is counted.
func TestPendingForgetsACallsBackgroundOnRelease(t *testing.T) {
	var p Pending
	bg, err := p.AddBackground(1)
	require.NoError(t, err)
	require.True(t, p.Remove(1))
	p.Release(bg)
	_, err = p.Add(2)
	require.NoError(t, err)
	assert.Equal(t, 1, p.Fail(errors.New("ended")))
}
