// Command discovery serves GET /.well-known/interrupt-host. It needs nothing but its
// environment, and links no AWS client.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	gw, err := environ.DiscoveryGateway()
	environ.ExitOn(err)
	lambda.Start(jsonapi.New(gw).Discovery())
}
