package registry_test

import (
	"encoding/json"
	"fmt"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

func ExamplePlanFor() {
	var s v0.ServerJSON
	json.Unmarshal([]byte(`{"name":"io.github.example/weather","packages":[{"registryType":"pypi","identifier":"weather-mcp-server","version":"0.5.0","transport":{"type":"stdio"},
		"environmentVariables":[{"name":"WEATHER_CITY","description":"City","isRequired":true},{"name":"WEATHER_API_KEY","isRequired":true,"isSecret":true}]}]}`), &s)
	plan, err := registry.PlanFor(&s, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range plan.Inputs {
		fmt.Print(in.Prompt())
		in.Value = "Lisbon"
		fmt.Println(in.Value)
	}
	sc, _ := plan.Server()
	fmt.Println(plan.Name, string(config.Entry(sc)))
	for _, v := range plan.Variables() {
		fmt.Println("set", v.Name, "for the", v.For)
	}
	// Output:
	// environment variable WEATHER_CITY (required): City: Lisbon
	// example-weather {"type":"stdio","command":"uvx","args":["weather-mcp-server@0.5.0"],"env":{"WEATHER_API_KEY":"${EXAMPLE_WEATHER_WEATHER_API_KEY}","WEATHER_CITY":"Lisbon"}}
	// set EXAMPLE_WEATHER_WEATHER_API_KEY for the environment variable WEATHER_API_KEY
}
