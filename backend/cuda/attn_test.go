package cuda

import "testing"

// TestPrefillSplits checks pattn_pre's split choice on the H200's shape
// (132 SMs, 3 blocks an SM) for Qwen3-0.6B (8 blocks a query tile).
func TestPrefillSplits(t *testing.T) {
	t.Parallel()
	br := &BatchRunner{dev: &device{SMs: 132}, base: &Model{shape: attnShape{pblocks: 8}}, partCap: prefillPartTokens}
	for _, c := range []struct{ ntiles, n, keys, occ, want int }{
		{16, 512, 512, 3, 1},           // no context: one split
		{16, 512, 4096 + 512, 3, 3},    // 128 blocks: 3 splits fill 396 places
		{16, 512, 32768 + 512, 3, 3},   // deeper: the same
		{16, 512, 1024 + 512, 3, 3},    // 1,536 keys: 3 splits of 512
		{16, 512, 1024, 3, 2},          // 1,024 keys: 2
		{32, 1024, 32768 + 1024, 3, 1}, // 256 blocks: nearly a wave already
		{2, 64, 32768, 3, 16},          // 16 blocks: at most 16 splits
		{1, 4000, 32768, 3, 1},         // the partials hold 4,096 token splits
	} {
		if got := br.prefillSplits(c.ntiles, c.n, c.keys, c.occ); got != c.want {
			t.Errorf("%d tiles of %d tokens, %d keys, %d blocks an SM: %d splits, want %d", c.ntiles, c.n, c.keys, c.occ, got, c.want)
		}
	}
	br.bt.psplit = 5
	if got := br.prefillSplits(16, 512, 512, 3); got != 5 {
		t.Errorf("psplit=5: %d splits", got)
	}
	if got := br.prefillSplits(16, 1000, 512, 3); got != 4 {
		t.Errorf("psplit=5 for 1,000 tokens: %d splits, want the 4 the partials hold", got)
	}
}
