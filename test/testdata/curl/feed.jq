# Feeds a hook's answer back into its request, as Metacontroller does: the answer's status replaces
# the parent's, and the answer's children become the observed children (keyed by name, hook v1).
# Usage: jq -s -f test/testdata/curl/feed.jq request.json response.json > next-request.json
def byname(kind): [.[] | select(.kind == kind) | {(.metadata.name): .}] | add // {};
.[0] as $req | .[1] as $resp
| $req
| .parent.status = $resp.status
| .children = {"Secret.v1": ($resp.children | byname("Secret")), "Job.batch/v1": ($resp.children | byname("Job"))}
