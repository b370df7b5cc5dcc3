package sync

import "github.com/mcsps/rds-lambda-controller/sync/cloud"

// refusals are our own sentences for the OTC error codes a hook can meet when OTC refuses a
// request (DOC:rds/appendix/error_codes; /work/shared/otc-api.md §4). OTC's error_msg never reaches
// a condition: its wording is OTC's to change, and a message that differs between two calls makes
// Metacontroller write status again and again. The logs keep the code and OTC's message.
var refusals = map[string]string{
	// Parameters of the request.
	"DBS.200001": "a parameter of the request is invalid",
	"DBS.280001": "a parameter of the request is invalid",
	"DBS.200021": "the instance name is invalid",
	"DBS.200025": "an availability zone in availabilityzone is invalid",
	"DBS.200026": "the volume type is not offered for this engine or availability zone",
	"DBS.200052": "the root password does not meet OTC's rules",
	"DBS.201101": "the backup cycle is invalid",
	"DBS.201103": "backupstarttime is invalid",
	"DBS.201106": "backupkeepdays is out of range",
	"DBS.212002": "a parameter value is invalid",

	// Flavors, quotas, storage.
	"DBS.200053": "the flavor does not exist",
	"DBS.290002": "the flavor does not exist",
	"DBS.280450": "the flavor is sold out in this availability zone",
	"DBS.200046": "the project's quota is used up",
	"DBS.200306": "the volume can only grow",
	"DBS.200027": "the volume size must be a multiple of 10",
	"DBS.200023": "the volume size is out of range",

	// Network.
	"DBS.200503": "the VPC does not exist or does not belong to this project",
	"DBS.200501": "the subnet does not exist in this VPC",
	"DBS.200050": "the security group does not exist",

	// Things that do not exist or exist already.
	"DBS.200002": "the instance does not exist",
	"DBS.200045": "the instance does not exist",
	"DBS.200408": "the instance does not exist",
	"DBS.200602": "the instance does not exist",
	"DBS.201028": "the instance does not exist",
	"DBS.290005": "the instance does not exist",
	"DBS.201010": "the backup does not exist",
	"DBS.212001": "the parameter group does not exist",
	"DBS.200543": "the job does not exist",
	"DBS.200044": "the resource does not exist or the controller may not use it",
	"DBS.200022": "an instance of this name exists already",
	"DBS.201204": "a backup of this name exists already",

	// IAM (temporary credentials for log Jobs).
	"IAM.0007": "IAM refused the request for temporary credentials",
}

// refusal is the sentence for a request OTC refused. A known code gets our sentence; an unknown
// one only its code. An error without a code comes from the adapter itself (a name that does not
// resolve, a check before sending), whose message is our own and depends only on the spec.
//
// NOTE: this relies on the adapter's contract that an error carrying text from an OTC answer
// also carries OTC's error code; a codeless error's message must be the adapter's own words (for
// an answer without a code: a fixed sentence per HTTP status). OTC's text of such an answer is in
// e.Detail, which is only logged (cloudError) and never used here.
func refusal(e *cloud.Error) string {
	switch sentence, known := refusals[e.Code]; {
	case e.Code == "" && e.Message != "":
		return "OTC refused the request: " + e.Message + "."
	case e.Code == "":
		return "OTC refused the request."
	case known:
		return "OTC refused the request: " + sentence + " (" + e.Code + ")."
	default:
		return "OTC refused the request (code " + e.Code + ")."
	}
}
