package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/arktos-dev/arktos/client"
)

// A string array on the server: uploaded once, searched, counted and
// sorted there, and only the answers downloaded. (Compiled, not run: it
// needs a server at ARKTOS_URL.)
func ExampleUploadStrs() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "") // ARKTOS_URL, else tcp://localhost:5555
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fruit, err := client.UploadStrs(ctx, c, []string{"fig", "apple", "kiwi", "fig", "Äpfel"})
	if err != nil {
		log.Fatal(err) // text that is not UTF-8 is refused here, and nothing is left stored
	}
	defer fruit.Delete(ctx)

	isFig, err := fruit.Compare(ctx, "==", "fig")
	if err != nil {
		log.Fatal(err)
	}
	mask, _ := client.Download[bool](ctx, c, isFig.Name)
	fmt.Println(mask) // [true false false true false]

	values, counts, err := fruit.Unique(ctx)
	if err != nil {
		log.Fatal(err)
	}
	names, _ := values.Strings(ctx)
	n, _ := client.Download[int64](ctx, c, counts.Name)
	fmt.Println(names, n) // [apple fig kiwi Äpfel] [1 2 1 1]: by code point, Ä after k

	lower, err := fruit.Lower(ctx)
	if err != nil {
		log.Fatal(err)
	}
	hasP, _ := lower.Contains(ctx, "p", false)
	p, _ := client.Download[bool](ctx, c, hasP.Name)
	fmt.Println(p) // [false true false false true]

	_ = c.Delete(ctx, isFig.Name, counts.Name, hasP.Name)
	_ = values.Delete(ctx)
	_ = lower.Delete(ctx)
}
