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
	info, err := fileInfo(m.Path, m.File)
	if err != nil {
		return info, err
	}
	info.Memory = info.Size
	if ps, ok := runner.(engine.PoolSizer); ok {
		pool, _ := ps.PoolBytes()
		info.Memory += pool
	}
	if backend == "cuda" || backend == "vulkan" {
		info.GPUMemory = info.Memory
	}
	return info, nil
}

// headerInfo describes the GGUF file at path from its header alone (no
// weights are read), for the lists of models not loaded yet.
func headerInfo(path string) (*server.ModelInfo, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := fileInfo(path, f)
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// fileInfo describes the GGUF file at path, parsed as f: its size, time,
// header digest, architecture, weights, quantization and metadata.
func fileInfo(path string, f *gguf.File) (server.ModelInfo, error) {
	info := server.ModelInfo{Metadata: map[string]any{}}
	st, err := os.Stat(path)
	if err != nil {
		return info, err
	}
	info.Size, info.Modified = st.Size(), st.ModTime()
	if info.Digest, err = headerDigest(path, f.DataOffset); err != nil {
		return info, err
	}
	info.Architecture, _ = f.String("general.architecture")
	for _, t := range f.Tensors {
		info.Parameters += int64(t.Elements())
	}
	if ft, err := f.Int("general.file_type"); err == nil {
		if mix, ok := quantize.MixtureOf(uint32(ft)); ok {
			info.Quantization = mix.Name
		}
	}
	for _, kv := range f.KVs {
		if kv.Value.Type == gguf.TypeArray || kv.Key == "tokenizer.chat_template" {
			continue // the vocabulary's arrays; the template is /api/show's own field
		}
		info.Metadata[kv.Key] = kv.Value.Any()
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
