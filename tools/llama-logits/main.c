// llama-logits: llama.cpp's logits for a GGUF model and a list of token
// ids, evaluated on the CPU in one batch, written as little-endian float32.
//
//   llama-logits [options] MODEL.gguf TOKENS OUT.f32
//
// TOKENS is a comma-separated list of token ids ("1,2,3"), or @FILE to
// read them from a file (ids separated by commas or white space). OUT gets
// n_tokens rows of n_vocab float32 values, position after position (with
// --last, only the last position's row: what `inferno logits` writes).
// With --embd it writes instead the sequence's pooled embedding (n_embd
// float32 values, not normalized), pooled as the file's pooling_type says
// (llama_get_embeddings_seq; an error for a file of no pooling).
//
// Options:
//   --threads N   CPU threads (default 1; the logits do not depend on it
//                 for the matrix products llama.cpp uses here, but one
//                 thread is the safe choice for comparisons)
//   --kv f32|f16  KV cache element type (default f32, as inferno's CPU
//                 backends store it)
//   --fa          enable flash attention (default off)
//   --last        write only the last position's logits
//   --embd        write the pooled embedding instead of logits
//
// Build with build.sh beside this file.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *user) {
	(void)user;
	if (level >= GGML_LOG_LEVEL_WARN) {
		fputs(text, stderr);
	}
}

static void usage(void) {
	fprintf(stderr, "usage: llama-logits [--threads N] [--kv f32|f16] [--fa] [--last] [--embd] MODEL.gguf TOKENS|@FILE OUT.f32\n");
	exit(2);
}

// parse_ids reads token ids separated by commas or white space.
static int parse_ids(const char *s, llama_token **out) {
	int n = 0, cap = 64;
	llama_token *ids = malloc(cap * sizeof *ids);
	const char *p = s;
	for (;;) {
		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			p++;
		}
		if (*p == 0) {
			break;
		}
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno != 0 || v < 0 || v > INT32_MAX) {
			fprintf(stderr, "llama-logits: bad token id near %.16s\n", p);
			exit(2);
		}
		if (n == cap) {
			cap *= 2;
			ids = realloc(ids, cap * sizeof *ids);
		}
		ids[n++] = (llama_token)v;
		p = end;
	}
	*out = ids;
	return n;
}

static char *read_file(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "llama-logits: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t r;
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

int main(int argc, char **argv) {
	int threads = 1, last = 0, fa = 0, embd = 0;
	enum ggml_type kv = GGML_TYPE_F32;
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			threads = atoi(argv[++i]);
			if (threads < 1) {
				usage();
			}
		} else if (strcmp(argv[i], "--kv") == 0 && i + 1 < argc) {
			const char *t = argv[++i];
			if (strcmp(t, "f32") == 0) {
				kv = GGML_TYPE_F32;
			} else if (strcmp(t, "f16") == 0) {
				kv = GGML_TYPE_F16;
			} else {
				usage();
			}
		} else if (strcmp(argv[i], "--fa") == 0) {
			fa = 1;
		} else if (strcmp(argv[i], "--last") == 0) {
			last = 1;
		} else if (strcmp(argv[i], "--embd") == 0) {
			embd = 1;
		} else {
			usage();
		}
	}
	if (argc - i != 3) {
		usage();
	}
	const char *model_path = argv[i], *tok_arg = argv[i + 1], *out_path = argv[i + 2];

	llama_token *ids;
	int n;
	if (tok_arg[0] == '@') {
		char *text = read_file(tok_arg + 1);
		n = parse_ids(text, &ids);
		free(text);
	} else {
		n = parse_ids(tok_arg, &ids);
	}
	if (n == 0) {
		fprintf(stderr, "llama-logits: no token ids\n");
		return 2;
	}

	llama_log_set(quiet, NULL);
	llama_backend_init();

	struct llama_model_params mp = llama_model_default_params();
	mp.n_gpu_layers = 0;
	mp.devices = NULL;
	struct llama_model *model = llama_model_load_from_file(model_path, mp);
	if (!model) {
		fprintf(stderr, "llama-logits: cannot load %s\n", model_path);
		return 1;
	}
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	const int n_vocab = llama_vocab_n_tokens(vocab);
	for (int k = 0; k < n; k++) {
		if (ids[k] >= n_vocab) {
			fprintf(stderr, "llama-logits: token id %d is not below the vocabulary size %d\n", ids[k], n_vocab);
			return 2;
		}
	}

	struct llama_context_params cp = llama_context_default_params();
	cp.n_ctx = (uint32_t)(n < 256 ? 256 : n);
	cp.n_batch = (uint32_t)n;
	cp.n_ubatch = (uint32_t)n;
	cp.n_seq_max = 1;
	cp.n_threads = threads;
	cp.n_threads_batch = threads;
	cp.type_k = kv;
	cp.type_v = kv;
	cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
	cp.offload_kqv = false;
	cp.op_offload = false;
	cp.no_perf = true;
	// With embeddings on, llama.cpp pools as the file's pooling_type says
	// (pooling_type is left unspecified).
	cp.embeddings = embd;
	struct llama_context *ctx = llama_init_from_model(model, cp);
	if (!ctx) {
		fprintf(stderr, "llama-logits: cannot create a context\n");
		return 1;
	}

	struct llama_batch batch = llama_batch_init(n, 0, 1);
	batch.n_tokens = n;
	for (int k = 0; k < n; k++) {
		batch.token[k] = ids[k];
		batch.pos[k] = k;
		batch.n_seq_id[k] = 1;
		batch.seq_id[k][0] = 0;
		batch.logits[k] = !last || k == n - 1;
	}
	int rc = llama_decode(ctx, batch);
	if (rc != 0) {
		fprintf(stderr, "llama-logits: llama_decode returned %d\n", rc);
		return 1;
	}

	FILE *out = fopen(out_path, "wb");
	if (!out) {
		fprintf(stderr, "llama-logits: %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	if (embd) {
		const int n_embd = llama_model_n_embd(model);
		const float *e = llama_get_embeddings_seq(ctx, 0);
		if (llama_pooling_type(ctx) == LLAMA_POOLING_TYPE_NONE || !e) {
			fprintf(stderr, "llama-logits: no pooled embedding (pooling type %d)\n", (int)llama_pooling_type(ctx));
			return 1;
		}
		if (fwrite(e, sizeof(float), (size_t)n_embd, out) != (size_t)n_embd || fclose(out) != 0) {
			fprintf(stderr, "llama-logits: writing %s: %s\n", out_path, strerror(errno));
			return 1;
		}
		fprintf(stderr, "llama-logits: %d tokens, wrote an embedding of %d (pooling type %d) to %s\n", n, n_embd,
			(int)llama_pooling_type(ctx), out_path);
		llama_batch_free(batch);
		llama_free(ctx);
		llama_model_free(model);
		llama_backend_free();
		free(ids);
		return 0;
	}
	int rows = 0;
	for (int k = last ? n - 1 : 0; k < n; k++) {
		const float *row = llama_get_logits_ith(ctx, k);
		if (!row) {
			fprintf(stderr, "llama-logits: no logits for position %d\n", k);
			return 1;
		}
		// float32 little-endian: the host's order on every machine llama.cpp's
		// CPU backend runs on here (x86-64, arm64).
		if (fwrite(row, sizeof(float), (size_t)n_vocab, out) != (size_t)n_vocab) {
			fprintf(stderr, "llama-logits: writing %s: %s\n", out_path, strerror(errno));
			return 1;
		}
		rows++;
	}
	if (fclose(out) != 0) {
		fprintf(stderr, "llama-logits: writing %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "llama-logits: %d tokens, wrote %d x %d logits to %s\n", n, rows, n_vocab, out_path);

	llama_batch_free(batch);
	llama_free(ctx);
	llama_model_free(model);
	llama_backend_free();
	free(ids);
	return 0;
}
