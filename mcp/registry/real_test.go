package registry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

// realCase is a server.json of testdata/ and what installing it must
// write: the config name, the entry as config.Entry writes it (each
// input answered by answer), and the variables the user must set; or
// why it is refused.
type realCase struct {
	file    string // under testdata/
	all     bool   // Options.All
	name    string
	entry   string
	vars    []string
	refused string // in the error, after "the server cannot be installed"
}

// realCases are the registry documentation's examples (testdata/*.json)
// and the server.json files of servers' own repositories
// (testdata/real, sources in testdata/real/SOURCES.md): each without
// All, and with All where that changes what is written.
var realCases = []realCase{
	{file: "cargo.json", all: false, refused: "the server cannot be installed io.github.example/widget-mcp: cargo package widget-mcp: installing crates is not supported (cargo install it, then add its command to the config)"},
	{file: "mcpb.json", all: false, refused: "the server cannot be installed io.modelcontextprotocol/text-editor: MCP bundle https://github.com/modelcontextprotocol/text-editor-mcpb/releases/download/v1.0.2/text-editor.mcpb: installing .mcpb bundles is not supported (open the bundle with an app that installs them, or install another package of the server)"},
	{file: "no-package.json", all: false, refused: "the server cannot be installed io.modelcontextprotocol.anonymous/embedded-mcp: it has no packages and no remotes"},
	{file: "npm-and-oci.json", all: false, name: "modelcontextprotocol-filesystem",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem@1.0.2","/Users/username/Desktop"],"env":{"LOG_LEVEL":"info"}}`},
	{file: "npm-and-remotes.json", all: false, name: "modelcontextprotocol-hybrid-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@example/hybrid-mcp-server@1.5.0","--mode","local"],"env":{}}`},
	{file: "npm-embedded-cli.json", all: false, name: "snyk-cli-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","snyk@1.1298.0","mcp","-t","stdio"],"env":{}}`},
	{file: "npm-local-templated.json", all: false, refused: "the server cannot be installed io.github.example/configurable-server: npm package @example/mcp-server runs a streamable-http server, which is not installed (stdio is)"},
	{file: "npm-monorepo.json", all: false, name: "modelcontextprotocol-everything",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/everything@0.6.2"],"env":{}}`},
	{file: "npm.json", all: false, name: "modelcontextprotocol-brave-search",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-brave-search@1.0.2"],"env":{"BRAVE_API_KEY":"${MODELCONTEXTPROTOCOL_BRAVE_SEARCH_BRAVE_API_KEY}"}}`, vars: []string{"MODELCONTEXTPROTOCOL_BRAVE_SEARCH_BRAVE_API_KEY"}},
	{file: "nuget-fixed-arguments.json", all: false, name: "joelverhagen-knapcode-samplemcpserver",
		entry: `{"type":"stdio","command":"dnx","args":["Knapcode.SampleMcpServer@0.4.0-beta","--yes","--","mcp","start"],"env":{}}`},
	{file: "nuget.json", all: false, name: "joelverhagen-knapcode-samplemcpserver",
		entry: `{"type":"stdio","command":"dnx","args":["Knapcode.SampleMcpServer@0.5.0","--yes"],"env":{"WEATHER_CHOICES":"x-WEATHER_CHOICES"}}`},
	{file: "oci-quay.json", all: false, name: "example-quay-sample-mcp",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","quay.io/myorg/my-mcp-server:1.0.0"],"env":{}}`},
	{file: "oci.json", all: false, name: "example-database-manager",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","--network","host","-e","DB_TYPE=postgres","-e","DB_PASSWORD","-e","DB_USERNAME","-e","SSL_MODE","docker.io/example/database-manager-mcp:3.1.0","--host","localhost","x-database_name"],"env":{"DB_PASSWORD":"${EXAMPLE_DATABASE_MANAGER_DB_PASSWORD}","DB_USERNAME":"x-DB_USERNAME","SSL_MODE":"prefer"}}`, vars: []string{"EXAMPLE_DATABASE_MANAGER_DB_PASSWORD"}},
	{file: "oci.json", all: true, name: "example-database-manager",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","--network","host","-e","DB_TYPE=postgres","-e","DB_PASSWORD","-e","DB_USERNAME","-e","SSL_MODE","docker.io/example/database-manager-mcp:3.1.0","--host","localhost","--port","7","x-database_name"],"env":{"DB_PASSWORD":"${EXAMPLE_DATABASE_MANAGER_DB_PASSWORD}","DB_USERNAME":"x-DB_USERNAME","SSL_MODE":"disable"}}`, vars: []string{"EXAMPLE_DATABASE_MANAGER_DB_PASSWORD"}},
	{file: "pypi.json", all: false, name: "example-weather-mcp",
		entry: `{"type":"stdio","command":"uvx","args":["weather-mcp-server@0.5.0"],"env":{"WEATHER_API_KEY":"${EXAMPLE_WEATHER_MCP_WEATHER_API_KEY}","WEATHER_UNITS":"celsius"}}`, vars: []string{"EXAMPLE_WEATHER_MCP_WEATHER_API_KEY"}},
	{file: "remote-sse-templated.json", all: false, name: "modelcontextprotocol-events-server",
		entry: `{"type":"sse","url":"https://events.anonymous.modelcontextprotocol.io/sse/x-tenant_id"}`},
	{file: "remote-templated.json", all: false, name: "modelcontextprotocol-multi-tenant-server",
		entry: `{"type":"http","url":"https://anonymous.modelcontextprotocol.io/mcp/x-tenant_id"}`},
	{file: "remote.json", all: false, name: "modelcontextprotocol-mcp-fs",
		entry: `{"type":"http","url":"https://mcp-fs.anonymous.modelcontextprotocol.io/http"}`},
	{file: "real/apify_apify-mcp-server.json", all: false, name: "apify-mcp-server",
		entry: `{"type":"http","url":"https://mcp.apify.com/","headers":{"Authorization":"${APIFY_MCP_SERVER_AUTHORIZATION}"}}`, vars: []string{"APIFY_MCP_SERVER_AUTHORIZATION"}},
	{file: "real/auth0_auth0-mcp-server.json", all: false, name: "auth0-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@auth0/auth0-mcp-server@0.1.0-beta.10","run"],"env":{}}`},
	{file: "real/awslabs_mcp_ecs-mcp-server.json", all: false, name: "awslabs-ecs-mcp-server",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-proxy-for-aws@1.1.1","https://ecs-mcp.us-east-1.api.aws/mcp","--service","ecs-mcp","--profile","default","--region","us-east-1"],"env":{}}`},
	{file: "real/brightdata_brightdata-mcp.json", all: false, name: "brightdata-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@brightdata/mcp@2.9.4"],"env":{"API_TOKEN":"${BRIGHTDATA_MCP_API_TOKEN}"}}`, vars: []string{"BRIGHTDATA_MCP_API_TOKEN"}},
	{file: "real/brightdata_brightdata-mcp.json", all: true, name: "brightdata-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@brightdata/mcp@2.9.4"],"env":{"API_TOKEN":"${BRIGHTDATA_MCP_API_TOKEN}","BASE_MAX_RETRIES":"7","BASE_TIMEOUT":"7","BROWSER_ZONE":"x-BROWSER_ZONE","GROUPS":"x-GROUPS","POLLING_TIMEOUT":"7","PRO_MODE":"true","TOOLS":"x-TOOLS","WEB_UNLOCKER_ZONE":"x-WEB_UNLOCKER_ZONE"}}`, vars: []string{"BRIGHTDATA_MCP_API_TOKEN"}},
	{file: "real/browserbase_mcp-server-browserbase.json", all: false, name: "browserbase-mcp-server-browserbase",
		entry: `{"type":"stdio","command":"npx","args":["-y","@browserbasehq/mcp@2.2.0"],"env":{"BROWSERBASE_API_KEY":"${BROWSERBASE_MCP_SERVER_BROWSERBASE_BROWSERBASE_API_KEY}","BROWSERBASE_PROJECT_ID":"x-BROWSERBASE_PROJECT_ID","GEMINI_API_KEY":"${BROWSERBASE_MCP_SERVER_BROWSERBASE_GEMINI_API_KEY}"}}`, vars: []string{"BROWSERBASE_MCP_SERVER_BROWSERBASE_BROWSERBASE_API_KEY", "BROWSERBASE_MCP_SERVER_BROWSERBASE_GEMINI_API_KEY"}},
	{file: "real/browserstack_mcp-server.json", all: false, name: "browserstack-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","@browserstack/mcp-server@1.2.36"],"env":{"BROWSERSTACK_ACCESS_KEY":"${BROWSERSTACK_MCP_SERVER_BROWSERSTACK_ACCESS_KEY}","BROWSERSTACK_USERNAME":"x-BROWSERSTACK_USERNAME"}}`, vars: []string{"BROWSERSTACK_MCP_SERVER_BROWSERSTACK_ACCESS_KEY"}},
	{file: "real/chromedevtools_chrome-devtools-mcp.json", all: false, name: "chromedevtools-chrome-devtools-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","chrome-devtools-mcp@1.7.0"],"env":{}}`},
	{file: "real/circleci-public_mcp-server-circleci.json", all: false, refused: "the server cannot be installed io.circleci.mcp/mcp-server-circleci: package \"\" names no registry type (registryType)"},
	{file: "real/cloudflare_mcp-server-cloudflare.json", all: false, name: "cloudflare-mcp",
		entry: `{"type":"http","url":"https://docs.mcp.cloudflare.com/mcp"}`},
	{file: "real/containers_kubernetes-mcp-server.json", all: false, name: "containers-kubernetes-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","kubernetes-mcp-server@0.0.0"],"env":{}}`},
	{file: "real/dynatrace-oss_dynatrace-mcp.json", all: false, name: "dynatrace-oss-dynatrace-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@dynatrace-oss/dynatrace-mcp-server@2.1.2"],"env":{"DT_ENVIRONMENT":"x-DT_ENVIRONMENT"}}`},
	{file: "real/dynatrace-oss_dynatrace-mcp.json", all: true, name: "dynatrace-oss-dynatrace-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@dynatrace-oss/dynatrace-mcp-server@2.1.2"],"env":{"DT_ENVIRONMENT":"x-DT_ENVIRONMENT","DT_GRAIL_QUERY_BUDGET_GB":"7","DT_PLATFORM_TOKEN":"${DYNATRACE_OSS_DYNATRACE_MCP_DT_PLATFORM_TOKEN}","OAUTH_CLIENT_ID":"x-OAUTH_CLIENT_ID","OAUTH_CLIENT_SECRET":"${DYNATRACE_OSS_DYNATRACE_MCP_OAUTH_CLIENT_SECRET}"}}`, vars: []string{"DYNATRACE_OSS_DYNATRACE_MCP_DT_PLATFORM_TOKEN", "DYNATRACE_OSS_DYNATRACE_MCP_OAUTH_CLIENT_SECRET"}},
	{file: "real/elevenlabs_elevenlabs-mcp.json", all: false, name: "elevenlabs-mcp",
		entry: `{"type":"stdio","command":"uvx","args":["elevenlabs-mcp@0.8.1"],"env":{"ELEVENLABS_API_KEY":"${ELEVENLABS_MCP_ELEVENLABS_API_KEY}"}}`, vars: []string{"ELEVENLABS_MCP_ELEVENLABS_API_KEY"}},
	{file: "real/elevenlabs_elevenlabs-mcp.json", all: true, name: "elevenlabs-mcp",
		entry: `{"type":"stdio","command":"uvx","args":["elevenlabs-mcp@0.8.1"],"env":{"ELEVENLABS_API_KEY":"${ELEVENLABS_MCP_ELEVENLABS_API_KEY}","ELEVENLABS_API_RESIDENCY":"x-ELEVENLABS_API_RESIDENCY","ELEVENLABS_MCP_BASE_PATH":"x-ELEVENLABS_MCP_BASE_PATH","ELEVENLABS_MCP_OUTPUT_MODE":"x-ELEVENLABS_MCP_OUTPUT_MODE"}}`, vars: []string{"ELEVENLABS_MCP_ELEVENLABS_API_KEY"}},
	{file: "real/exa-labs_exa-mcp-server.json", all: false, name: "exa-labs-exa-mcp-server",
		entry: `{"type":"sse","url":"https://mcp.exa.ai/mcp"}`},
	{file: "real/firecrawl_firecrawl-mcp-server.json", all: false, name: "firecrawl-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","firecrawl-mcp@3.24.0"],"env":{}}`},
	{file: "real/firecrawl_firecrawl-mcp-server.json", all: true, name: "firecrawl-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","firecrawl-mcp@3.24.0"],"env":{"FIRECRAWL_API_KEY":"${FIRECRAWL_MCP_SERVER_FIRECRAWL_API_KEY}"}}`, vars: []string{"FIRECRAWL_MCP_SERVER_FIRECRAWL_API_KEY"}},
	{file: "real/github_github-mcp-server.json", all: false, name: "github-mcp-server",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-p","127.0.0.1:8085:8085","-e","GITHUB_OAUTH_CALLBACK_PORT=8085","ghcr.io/github/github-mcp-server:1.10.1"],"env":{}}`},
	{file: "real/github_github-mcp-server.json", all: true, name: "github-mcp-server",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-p","127.0.0.1:8085:8085","-e","GITHUB_OAUTH_CALLBACK_PORT=8085","-e","GITHUB_PERSONAL_ACCESS_TOKEN","ghcr.io/github/github-mcp-server:1.10.1"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_MCP_SERVER_TOKEN}"}}`, vars: []string{"GITHUB_MCP_SERVER_TOKEN"}},
	{file: "real/glips_figma-context-mcp.json", all: false, name: "glips-figma-context-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","figma-developer-mcp@0.6.4","--stdio"],"env":{"FIGMA_API_KEY":"${GLIPS_FIGMA_CONTEXT_MCP_FIGMA_API_KEY}"}}`, vars: []string{"GLIPS_FIGMA_CONTEXT_MCP_FIGMA_API_KEY"}},
	{file: "real/grafana_mcp-grafana.json", all: false, name: "grafana-mcp-grafana",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-e","GRAFANA_URL","docker.io/grafana/mcp-grafana:1.1.0"],"env":{"GRAFANA_URL":"x-GRAFANA_URL"}}`},
	{file: "real/grafana_mcp-grafana.json", all: true, name: "grafana-mcp-grafana",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-e","GRAFANA_EXTRA_HEADERS","-e","GRAFANA_FORWARD_HEADERS","-e","GRAFANA_ORG_ID","-e","GRAFANA_PASSWORD","-e","GRAFANA_SERVICE_ACCOUNT_TOKEN","-e","GRAFANA_URL","-e","GRAFANA_USERNAME","docker.io/grafana/mcp-grafana:1.1.0"],"env":{"GRAFANA_EXTRA_HEADERS":"x-GRAFANA_EXTRA_HEADERS","GRAFANA_FORWARD_HEADERS":"x-GRAFANA_FORWARD_HEADERS","GRAFANA_ORG_ID":"x-GRAFANA_ORG_ID","GRAFANA_PASSWORD":"${GRAFANA_MCP_GRAFANA_GRAFANA_PASSWORD}","GRAFANA_SERVICE_ACCOUNT_TOKEN":"${GRAFANA_MCP_GRAFANA_GRAFANA_SERVICE_ACCOUNT_TOKEN}","GRAFANA_URL":"x-GRAFANA_URL","GRAFANA_USERNAME":"x-GRAFANA_USERNAME"}}`, vars: []string{"GRAFANA_MCP_GRAFANA_GRAFANA_SERVICE_ACCOUNT_TOKEN", "GRAFANA_MCP_GRAFANA_GRAFANA_PASSWORD"}},
	{file: "real/hashicorp_terraform-mcp-server.json", all: false, name: "hashicorp-terraform-mcp-server",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-e","TFE_ADDRESS=https://app.terraform.io","-e","ENABLE_TF_OPERATIONS=false","docker.io/hashicorp/terraform-mcp-server:1.2.0"],"env":{}}`},
	{file: "real/hashicorp_terraform-mcp-server.json", all: true, name: "hashicorp-terraform-mcp-server",
		entry: `{"type":"stdio","command":"docker","args":["run","-i","--rm","-e","TFE_ADDRESS=https://app.terraform.io","-e","TFE_TOKEN","-e","ENABLE_TF_OPERATIONS=false","docker.io/hashicorp/terraform-mcp-server:1.2.0"],"env":{"TFE_TOKEN":"${HASHICORP_TERRAFORM_MCP_SERVER_TOKEN}"}}`, vars: []string{"HASHICORP_TERRAFORM_MCP_SERVER_TOKEN"}},
	{file: "real/hashicorp_vault-mcp-server.json", all: false, refused: "the server cannot be installed io.github.hashicorp/vault-mcp-server: OCI image docker.io/hashicorp/vault-mcp-server:0.2.2's runtime argument 1: docker would take \"run\" for the image to run"},
	{file: "real/jsdelivr_globalping-mcp-server.json", all: false, name: "globalping-mcp",
		entry: `{"type":"sse","url":"https://mcp.globalping.io/sse"}`},
	{file: "real/mapbox_mcp-server.json", all: false, name: "mapbox-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","@mapbox/mcp-server@0.14.0"],"env":{"MAPBOX_ACCESS_TOKEN":"${MAPBOX_MCP_SERVER_MAPBOX_ACCESS_TOKEN}"}}`, vars: []string{"MAPBOX_MCP_SERVER_MAPBOX_ACCESS_TOKEN"}},
	{file: "real/microsoft_azure-devops-mcp.json", all: false, name: "microsoft-azure-devops",
		entry: `{"type":"stdio","command":"npx","args":["-y","@microsoft/azure-devops@2.4.0"],"env":{}}`},
	{file: "real/microsoft_mcp_azure.mcp.server.json", all: false, name: "microsoft-azure",
		entry: `{"type":"stdio","command":"dnx","args":["Azure.Mcp@3.0.0-beta.37","--yes","--","server","start"],"env":{}}`},
	{file: "real/microsoft_mcp_fabric.mcp.server.json", all: false, name: "microsoft-fabric",
		entry: `{"type":"stdio","command":"dnx","args":["Microsoft.Fabric.Mcp@1.3.0","--yes","--","server","start"],"env":{}}`},
	{file: "real/microsoft_playwright-mcp.json", all: false, name: "microsoft-playwright-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@playwright/mcp@0.0.79"],"env":{}}`},
	{file: "real/microsoft_playwright-mcp_dot-mcp.json", all: false, name: "microsoft-playwright-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@playwright/mcp@0.0.54"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_everything.json", all: false, name: "modelcontextprotocol-server-everything",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-everything@2.0.0","stdio"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_fetch.json", all: false, name: "modelcontextprotocol-server-fetch",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-server-fetch@0.6.3"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_filesystem.json", all: false, name: "modelcontextprotocol-server-filesystem",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem@0.6.3","/data"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_git.json", all: false, name: "modelcontextprotocol-server-git",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-server-git@0.6.2"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_memory.json", all: false, name: "modelcontextprotocol-server-memory",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-memory@0.6.3"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_sequentialthinking.json", all: false, name: "modelcontextprotocol-server-sequential-thinking",
		entry: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-sequential-thinking@0.6.2"],"env":{}}`},
	{file: "real/modelcontextprotocol_servers_time.json", all: false, name: "modelcontextprotocol-server-time",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-server-time@0.6.2"],"env":{}}`},
	{file: "real/mondaycom_mcp.json", all: false, name: "monday-com",
		entry: `{"type":"http","url":"https://mcp.monday.com/mcp"}`},
	{file: "real/mondaycom_mcp.json", all: true, name: "monday-com",
		entry: `{"type":"http","url":"https://mcp.monday.com/mcp","headers":{"Authorization":"${MONDAY_COM_AUTHORIZATION}"}}`, vars: []string{"MONDAY_COM_AUTHORIZATION"}},
	{file: "real/mongodb-js_mongodb-mcp-server_mongodb-mcp-server.json", all: false, name: "mongodb-js-mongodb-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","mongodb-mcp-server@3.0.0-prerelease.2"],"env":{}}`},
	{file: "real/mongodb-js_mongodb-mcp-server_mongodb-mcp-server.json", all: true, refused: "the server cannot be installed io.github.mongodb-js/mongodb-mcp-server: it asks for 88 inputs and variables, more than 64"},
	{file: "real/motherduckdb_mcp-server-motherduck.json", all: false, name: "motherduckdb-mcp-server-motherduck",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-server-motherduck@1.0.6","--transport","stdio","--port","8000","--host","127.0.0.1","--db-path",":memory:","--max-rows","1024","--max-chars","50000","--query-timeout","-1"],"env":{}}`},
	{file: "real/motherduckdb_mcp-server-motherduck.json", all: true, name: "motherduckdb-mcp-server-motherduck",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-server-motherduck@1.0.6","--transport","stdio","--port","8000","--host","127.0.0.1","--db-path",":memory:","--motherduck-token","${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN}","--read-write","x-read-write","--allow-switch-databases","x-allow-switch-databases","--motherduck-saas-mode","x-motherduck-saas-mode","--init-sql","x-init-sql","--home-dir","x-home-dir","--max-rows","1024","--max-chars","50000","--query-timeout","-1","--ephemeral-connections","x-ephemeral-connections"],"env":{"AWS_ACCESS_KEY_ID":"${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_ACCESS_KEY_ID}","AWS_DEFAULT_REGION":"x-AWS_DEFAULT_REGION","AWS_ENDPOINT":"x-AWS_ENDPOINT","AWS_SECRET_ACCESS_KEY":"${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_SECRET_ACCESS_KEY}","AWS_SESSION_TOKEN":"${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_SESSION_TOKEN}","HOME":"x-HOME","MOTHERDUCK_TOKEN":"${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN_3}","motherduck_token":"${MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN_2}"}}`, vars: []string{"MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN", "MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN_2", "MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_MOTHERDUCK_TOKEN_3", "MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_ACCESS_KEY_ID", "MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_SECRET_ACCESS_KEY", "MOTHERDUCKDB_MCP_SERVER_MOTHERDUCK_AWS_SESSION_TOKEN"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-cloud-aura-api.json", all: false, name: "neo4j-contrib-mcp-neo4j-aura-manager",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-aura-manager@0.4.8"],"env":{"NEO4J_AURA_CLIENT_ID":"${NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_ID}","NEO4J_AURA_CLIENT_SECRET":"${NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_SECRET}"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_ID", "NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_SECRET"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-cloud-aura-api.json", all: true, name: "neo4j-contrib-mcp-neo4j-aura-manager",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-aura-manager@0.4.8"],"env":{"NEO4J_AURA_CLIENT_ID":"${NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_ID}","NEO4J_AURA_CLIENT_SECRET":"${NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_SECRET}","NEO4J_NAMESPACE":"x-NEO4J_NAMESPACE"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_ID", "NEO4J_CONTRIB_MCP_NEO4J_AURA_MANAGER_NEO4J_AURA_CLIENT_SECRET"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-cypher.json", all: false, name: "neo4j-contrib-mcp-neo4j-cypher",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-cypher@0.6.0"],"env":{"NEO4J_PASSWORD":"${NEO4J_CONTRIB_MCP_NEO4J_CYPHER_NEO4J_PASSWORD}","NEO4J_URI":"x-NEO4J_URI","NEO4J_USERNAME":"x-NEO4J_USERNAME"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_CYPHER_NEO4J_PASSWORD"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-cypher.json", all: true, name: "neo4j-contrib-mcp-neo4j-cypher",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-cypher@0.6.0"],"env":{"NEO4J_DATABASE":"x-NEO4J_DATABASE","NEO4J_NAMESPACE":"x-NEO4J_NAMESPACE","NEO4J_PASSWORD":"${NEO4J_CONTRIB_MCP_NEO4J_CYPHER_NEO4J_PASSWORD}","NEO4J_READ_ONLY":"x-NEO4J_READ_ONLY","NEO4J_READ_TIMEOUT":"x-NEO4J_READ_TIMEOUT","NEO4J_RESPONSE_TOKEN_LIMIT":"x-NEO4J_RESPONSE_TOKEN_LIMIT","NEO4J_SCHEMA_SAMPLE_SIZE":"x-NEO4J_SCHEMA_SAMPLE_SIZE","NEO4J_URI":"x-NEO4J_URI","NEO4J_USERNAME":"x-NEO4J_USERNAME"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_CYPHER_NEO4J_PASSWORD"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-data-modeling.json", all: false, name: "neo4j-contrib-mcp-neo4j-data-modeling",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-data-modeling@0.8.2"],"env":{}}`},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-data-modeling.json", all: true, name: "neo4j-contrib-mcp-neo4j-data-modeling",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-data-modeling@0.8.2"],"env":{"NEO4J_NAMESPACE":"x-NEO4J_NAMESPACE"}}`},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-memory.json", all: false, name: "neo4j-contrib-mcp-neo4j-memory",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-memory@0.4.5"],"env":{"NEO4J_PASSWORD":"${NEO4J_CONTRIB_MCP_NEO4J_MEMORY_NEO4J_PASSWORD}","NEO4J_URI":"x-NEO4J_URI","NEO4J_USERNAME":"x-NEO4J_USERNAME"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_MEMORY_NEO4J_PASSWORD"}},
	{file: "real/neo4j-contrib_mcp-neo4j_mcp-neo4j-memory.json", all: true, name: "neo4j-contrib-mcp-neo4j-memory",
		entry: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-memory@0.4.5"],"env":{"NEO4J_DATABASE":"x-NEO4J_DATABASE","NEO4J_NAMESPACE":"x-NEO4J_NAMESPACE","NEO4J_PASSWORD":"${NEO4J_CONTRIB_MCP_NEO4J_MEMORY_NEO4J_PASSWORD}","NEO4J_URI":"x-NEO4J_URI","NEO4J_USERNAME":"x-NEO4J_USERNAME"}}`, vars: []string{"NEO4J_CONTRIB_MCP_NEO4J_MEMORY_NEO4J_PASSWORD"}},
	{file: "real/neondatabase_mcp-server-neon.json", all: false, name: "neon-mcp",
		entry: `{"type":"http","url":"https://mcp.neon.tech/mcp","headers":{"x-read-only":"false"}}`},
	{file: "real/neondatabase_mcp-server-neon.json", all: true, name: "neon-mcp",
		entry: `{"type":"http","url":"https://mcp.neon.tech/mcp","headers":{"Authorization":"${NEON_MCP_AUTHORIZATION}","x-read-only":"false"}}`, vars: []string{"NEON_MCP_AUTHORIZATION"}},
	{file: "real/oraios_serena.json", all: false, refused: "the server cannot be installed io.github.oraios/serena: PyPI package serena-agent's runtime argument 2: uvx would take \"start-mcp-server\" for the package to run"},
	{file: "real/oxylabs_oxylabs-mcp.json", all: false, name: "oxylabs-mcp",
		entry: `{"type":"stdio","command":"uvx","args":["oxylabs-mcp@0.7.2"],"env":{}}`},
	{file: "real/oxylabs_oxylabs-mcp.json", all: true, name: "oxylabs-mcp",
		entry: `{"type":"stdio","command":"uvx","args":["oxylabs-mcp@0.7.2"],"env":{"OXYLABS_AI_STUDIO_API_KEY":"${OXYLABS_MCP_OXYLABS_AI_STUDIO_API_KEY}","OXYLABS_PASSWORD":"${OXYLABS_MCP_OXYLABS_PASSWORD}","OXYLABS_USERNAME":"${OXYLABS_MCP_OXYLABS_USERNAME}"}}`, vars: []string{"OXYLABS_MCP_OXYLABS_USERNAME", "OXYLABS_MCP_OXYLABS_PASSWORD", "OXYLABS_MCP_OXYLABS_AI_STUDIO_API_KEY"}},
	{file: "real/perplexityai_modelcontextprotocol.json", all: false, name: "perplexity-mcp-server",
		entry: `{"type":"stdio","command":"npx","args":["-y","@perplexity-ai/mcp-server@1.2.0"],"env":{}}`},
	{file: "real/redis_mcp-redis.json", all: false, name: "redis-mcp-redis",
		entry: `{"type":"stdio","command":"uvx","args":["redis-mcp-server@0.5.1"],"env":{}}`},
	{file: "real/ref-tools_ref-tools-mcp.json", all: false, name: "ref-tools-mcp",
		entry: `{"type":"http","url":"https://api.ref.tools/mcp","headers":{"X-Ref-Api-Key":"${REF_TOOLS_MCP_X_REF_API_KEY}"}}`, vars: []string{"REF_TOOLS_MCP_X_REF_API_KEY"}},
	{file: "real/sonarsource_sonarqube-mcp-server.json", all: false, refused: "the server cannot be installed io.github.SonarSource/sonarqube-mcp-server: OCI image docker.io/sonarsource/sonarqube-mcp has no tag: it would run whatever is pushed next"},
	{file: "real/stripe_ai_modelcontextprotocol.json", all: false, name: "stripe-mcp",
		entry: `{"type":"http","url":"https://mcp.stripe.com"}`},
	{file: "real/supabase-community_supabase-mcp_mcp-server-supabase.json", all: false, name: "supabase-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","@supabase/mcp-server-supabase@0.7.0"],"env":{"SUPABASE_ACCESS_TOKEN":"${SUPABASE_MCP_SUPABASE_ACCESS_TOKEN}"}}`, vars: []string{"SUPABASE_MCP_SUPABASE_ACCESS_TOKEN"}},
	{file: "real/upstash_context7.json", all: false, name: "upstash-context7",
		entry: `{"type":"stdio","command":"npx","args":["-y","@upstash/context7-mcp@2.0.2"],"env":{}}`},
	{file: "real/upstash_context7.json", all: true, name: "upstash-context7",
		entry: `{"type":"stdio","command":"npx","args":["-y","@upstash/context7-mcp@2.0.2"],"env":{"CONTEXT7_API_KEY":"${UPSTASH_CONTEXT7_CONTEXT7_API_KEY}"}}`, vars: []string{"UPSTASH_CONTEXT7_CONTEXT7_API_KEY"}},
	{file: "real/vercel_next-devtools-mcp.json", all: false, name: "vercel-next-devtools-mcp",
		entry: `{"type":"stdio","command":"npx","args":["-y","next-devtools-mcp@0.4.0"],"env":{}}`},
	{file: "real/webflow_mcp-server.json", all: false, name: "webflow-mcp",
		entry: `{"type":"http","url":"https://mcp.webflow.com/mcp"}`},
}

func readDoc(t *testing.T, file string) *v0.ServerJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	var s v0.ServerJSON
	require.NoError(t, json.Unmarshal(b, &s))
	return &s
}

func TestRealServerJSONFilesBecomeTheirEntries(t *testing.T) {
	for _, tt := range realCases {
		name := tt.file
		if tt.all {
			name += ", all asked"
		}
		t.Run(name, func(t *testing.T) {
			p, err := registry.PlanFor(readDoc(t, tt.file), &registry.Options{All: tt.all})
			if tt.refused != "" {
				require.ErrorIs(t, err, registry.ErrUnsupported)
				assert.Contains(t, err.Error(), tt.refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.name, p.Name)
			for _, in := range p.Inputs {
				in.Value = answer(in)
			}
			sc, err := p.Server()
			require.NoError(t, err)
			assert.JSONEq(t, tt.entry, string(config.Entry(sc)))
			var vars []string
			for _, v := range p.Variables() {
				vars = append(vars, v.Name)
			}
			assert.Equal(t, tt.vars, vars)
		})
	}
}

func TestEveryTestFileIsInTheTableAndHasItsSource(t *testing.T) {
	sources, err := os.ReadFile(filepath.Join("testdata", "real", "SOURCES.md"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	real, err := filepath.Glob(filepath.Join("testdata", "real", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(real), 50)
	for _, f := range append(files, real...) {
		rel := strings.TrimPrefix(filepath.ToSlash(f), "testdata/")
		assert.True(t, slices.ContainsFunc(realCases, func(c realCase) bool { return c.file == rel }), "%s has no case", rel)
		assert.Contains(t, string(sources), "| "+filepath.Base(f)+" |", "%s has no source", rel)
	}
}

func TestTheRealServersGetDistinctNames(t *testing.T) {
	byName := map[string]string{}
	for _, tt := range realCases {
		if tt.name == "" {
			continue
		}
		server := readDoc(t, tt.file).Name
		if other, ok := byName[tt.name]; ok && other != server {
			// The one pair that meets: one owner's server under two
			// top-level labels, as ConfigName says.
			assert.ElementsMatch(t, []string{"io.github.microsoft/playwright-mcp", "com.microsoft/playwright-mcp"}, []string{other, server})
		}
		byName[tt.name] = server
	}
}
