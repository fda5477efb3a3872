// Package apptest renders MCP Apps views in a real browser: the views of
// the official example servers (npm @modelcontextprotocol/server-*),
// shown by package mcp/apps in headless Chromium (npm @sparticuz/chromium),
// driven over the DevTools protocol with chromedp. It is a module of its
// own, so that the browser's driver stays out of mcplug's go.mod.
//
//	MCPLUG_BROWSER=1 go test ./...   # installs both into the user's cache
//
// MCPLUG_BROWSER may instead name a Chromium executable. Each test saves
// a screenshot of the view it rendered as an artefact (go test
// -artifacts).
package apptest
