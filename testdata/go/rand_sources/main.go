// Tests crypto/rand (getrandom), math/rand/v2 (runtime-seeded ChaCha8/PCG) and rand.Shuffle; all output differs per run.
package main

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	b := make([]byte, 32)
	if _, err := crand.Read(b); err != nil {
		fmt.Println("crypto/rand:", err)
		os.Exit(1)
	}
	fmt.Printf("crypto/rand: %s\n", hex.EncodeToString(b))
	fmt.Printf("crypto/rand.Text: %s\n", crand.Text())
	fmt.Printf("math/rand/v2 global: %d %d %.6f\n", rand.IntN(1000000), rand.Uint64(), rand.Float64())
	var seed [32]byte
	crand.Read(seed[:])
	c := rand.New(rand.NewChaCha8(seed))
	fmt.Printf("ChaCha8 from crypto seed: %d %d\n", c.IntN(1000), c.Uint32())
	p := rand.New(rand.NewPCG(uint64(os.Getpid()), 42))
	fmt.Printf("PCG seeded by pid: %d\n", p.IntN(1000000))
	perm := rand.Perm(10)
	fmt.Printf("perm: %v\n", perm)
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	rand.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	fmt.Printf("shuffled: %v\n", words)
	m := map[int]bool{}
	for i := 0; i < 8; i++ {
		m[i] = true
	}
	order := []int{}
	for k := range m {
		order = append(order, k)
	}
	fmt.Printf("map iteration order: %v\n", order)
	fmt.Println("EXIT-SUCCESS")
}
