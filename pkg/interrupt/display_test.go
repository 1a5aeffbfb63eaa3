package interrupt_test

import (
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

func TestDisplayCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		d    interrupt.Display
		bad  []string
	}{
		{"nothing", interrupt.Display{}, nil},
		{"a name and an https URL", interrupt.Display{RequesterName: "Accounts payable", ArtifactURL: "https://erp.example.com/invoices/118?tab=lines#total"}, nil},
		{"http", interrupt.Display{ArtifactURL: "http://erp.example.com/invoices/118"}, []string{"/display/artifactUrl"}},
		{"a script", interrupt.Display{ArtifactURL: "javascript:alert(1)"}, []string{"/display/artifactUrl"}},
		{"relative", interrupt.Display{ArtifactURL: "/invoices/118"}, []string{"/display/artifactUrl"}},
		{"credentials", interrupt.Display{ArtifactURL: "https://user:pw@erp.example.com/"}, []string{"/display/artifactUrl"}},
		{"a space", interrupt.Display{ArtifactURL: "https://erp.example.com/a b"}, []string{"/display/artifactUrl"}},
		{"too long", interrupt.Display{ArtifactURL: "https://erp.example.com/" + strings.Repeat("a", interrupt.MaxArtifactURLLen)}, []string{"/display/artifactUrl"}},
		{"a blank name", interrupt.Display{RequesterName: "  "}, []string{"/display/requesterName"}},
		{"a control character", interrupt.Display{RequesterName: "Accounts\npayable"}, []string{"/display/requesterName"}},
		{"a long name", interrupt.Display{RequesterName: strings.Repeat("é", interrupt.MaxRequesterName+1)}, []string{"/display/requesterName"}},
		{"a name at the bound", interrupt.Display{RequesterName: strings.Repeat("é", interrupt.MaxRequesterName)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range tt.d.Check("/display") {
				got = append(got, f.Path)
			}
			if strings.Join(got, ",") != strings.Join(tt.bad, ",") {
				t.Errorf("Check = %v, want %v", got, tt.bad)
			}
		})
	}
}
