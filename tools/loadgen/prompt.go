package main

import (
	"math/rand/v2"
	"strings"
)

// words are the words of the chat-shaped APIs' prompts: common English
// words, each of which with the space before it is one token of the
// vocabularies of Qwen3, Llama 3 and GPT-4o (prompt_test.go checks
// Qwen3's), so that a prompt of n words is about n tokens.
var words = strings.Fields(`
the of and to in a is that for it as was with be by on not he this are
or his from at which but have an they you were her she there been one
all we their has would when if so no will more out up who them some
could what its into him time than then only other new about two over
may like these any people also first made after did most before very
many way where must through back years much your well down should
because each just those how too little state good make world still see
own men work long here get both between life being under never day
same another know while last might great old year off come since
against go came right used take three states himself few house use
during without again place around however home small found thought
went say part once general high upon school every does got united left
number course war until always away something fact though water less
public put think almost hand enough far took head yet government
system better set told nothing night end why called find look going
asked later knew point next city business give group toward young let
room president side social given present several order national
possible rather second face per among form often important things
early white case become large big need four within felt along children
saw best church ever least power development light thing family
interest want members others mind`)

// textPrompt returns n words drawn with rng, separated by spaces.
func textPrompt(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// tokenPrompt returns n token ids below vocab drawn with rng.
func tokenPrompt(rng *rand.Rand, n, vocab int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	return ids
}
