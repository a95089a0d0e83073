package main

import (
	"net/http/httptest"
	"testing"
)

func TestQueriesParamIsClampedAsTechEmpowerDoes(t *testing.T) {
	for query, want := range map[string]int{
		"":              1,
		"?queries=":     1,
		"?queries=foo":  1,
		"?queries=0":    1,
		"?queries=-3":   1,
		"?queries=20":   20,
		"?queries=500":  500,
		"?queries=501":  500,
		"?queries=9999": 500,
	} {
		r := httptest.NewRequest("GET", "/queries"+query, nil)
		if got := queriesParam(r); got != want {
			t.Errorf("%q: %d rows, want %d", query, got, want)
		}
	}
}
