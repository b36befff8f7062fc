package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"inferno/engine"
	"inferno/gguf"
	"inferno/model"
	"inferno/quantize"
	"inferno/server"
)

// modelInfo describes the file of m, loaded on a backend called backend
// with the KV pool of runner, for ollama's /api/tags, /api/show and
// /api/ps (server.ModelInfo).
func modelInfo(m *model.Model, backend string, runner engine.BatchRunner) (server.ModelInfo, error) {
	info := server.ModelInfo{Metadata: map[string]any{}}
	st, err := os.Stat(m.Path)
	if err != nil {
		return info, err
	}
	info.Size, info.Modified = st.Size(), st.ModTime()
	if info.Digest, err = headerDigest(m.Path, m.File.DataOffset); err != nil {
		return info, err
	}
	info.Architecture, _ = m.File.String("general.architecture")
	for _, t := range m.File.Tensors {
		info.Parameters += int64(t.Elements())
	}
	if ft, err := m.File.Int("general.file_type"); err == nil {
		if mix, ok := quantize.MixtureOf(uint32(ft)); ok {
			info.Quantization = mix.Name
		}
	}
	for _, kv := range m.File.KVs {
		if kv.Value.Type == gguf.TypeArray || kv.Key == "tokenizer.chat_template" {
			continue // the vocabulary's arrays; the template is /api/show's own field
		}
		info.Metadata[kv.Key] = kv.Value.Any()
	}
	info.Memory = info.Size
	if ps, ok := runner.(engine.PoolSizer); ok {
		pool, _ := ps.PoolBytes()
		info.Memory += pool
	}
	if backend == "cuda" {
		info.GPUMemory = info.Memory
	}
	return info, nil
}

// headerDigest is the SHA-256 of the first n bytes of the file at path,
// its GGUF header: the metadata and the tensors' index.
func headerDigest(path string, n uint64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, int64(n)); err != nil {
		return "", fmt.Errorf("%s: reading its header: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
