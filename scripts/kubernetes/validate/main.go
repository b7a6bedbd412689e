// Strict validation of scripts/kubernetes/*.yaml against the real Kubernetes API types
// (k8s.io/api), since `kubectl apply --dry-run=client` needs a live API server: every
// document is decoded by its kind with sigs.k8s.io/yaml's strict unmarshal, so an unknown or
// misspelt field fails, and the Indexed Job is checked for what the shards rely on.
//
//	go run . ../ingestbench-job.yaml
package main

import (
	"bytes"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: validate FILE.yaml")
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	jobs := 0
	for i, doc := range bytes.Split(text, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			fail("document %d: %v", i+1, err)
		}
		var obj any
		switch head.Kind {
		case "Job":
			obj = &batchv1.Job{}
		case "Service":
			obj = &corev1.Service{}
		case "PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		case "Secret":
			obj = &corev1.Secret{}
		default:
			fail("document %d: unexpected kind %q", i+1, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			fail("document %d (%s): %v", i+1, head.Kind, err)
		}
		if j, ok := obj.(*batchv1.Job); ok {
			jobs++
			s := j.Spec
			if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
				fail("Job %s: completionMode must be Indexed (each pod gets JOB_COMPLETION_INDEX)", j.Name)
			}
			if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
				fail("Job %s: parallelism must equal completions (every shard runs at once)", j.Name)
			}
		}
	}
	if jobs != 1 {
		fail("expected one Job, found %d", jobs)
	}
	fmt.Println("ok")
}
