package main

import (
	"strings"
	"testing"
)

func TestFortunesAreSortedAndEscaped(t *testing.T) {
	page, err := renderFortunes([]fortune{
		{ID: 11, Message: `<script>alert("x");</script>`},
		{ID: 1, Message: "fortune: & more"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := page.String()
	if strings.Contains(s, "<script>") {
		t.Fatalf("raw <script> in %s", s)
	}
	script := strings.Index(s, "&lt;script&gt;")
	added := strings.Index(s, addedFortune)
	amp := strings.Index(s, "fortune: &amp; more")
	if script < 0 || added < script || amp < added {
		t.Fatalf("not sorted or not escaped: %s", s)
	}
}
