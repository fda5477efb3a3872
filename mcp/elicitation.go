package mcp
