// Command bundle writes the client generators' form of openapi.yaml (package clientgen): OpenAPI
// 3.0.3 in one JSON file, every schema inlined.
//
//	go run ./infra/local/cmd/bundle -o .local/openapi.bundle.json
//
// With -operations it lists the document's operationIds instead, one per line.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/interrupthost/interrupthost/infra/local/clientgen"
)

func main() {
	in := flag.String("i", "openapi.yaml", "the OpenAPI document")
	out := flag.String("o", "", "where to write the bundle (stdout when empty)")
	ops := flag.Bool("operations", false, "list the operationIds instead")
	flag.Parse()
	if *ops {
		ids, err := clientgen.Operations(*in)
		if err != nil {
			log.Fatal(err)
		}
		for _, id := range ids {
			fmt.Println(id)
		}
		return
	}
	b, err := clientgen.Bundle(*in)
	if err != nil {
		log.Fatal(err)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		log.Fatal(err)
	}
}
