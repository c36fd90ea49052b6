// Unit tests for cm/conn_state: every (state, input) pair against a table,
// the important paths step by step, and random walks checking the
// guarantees of conn_state.h.
#include <errno.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

extern "C" {
#include "cm/conn_state.h"
}

namespace
{

// --- driving the machine --------------------------------------------------

enum Src { CM, API, QP, TIMER, CALL };

struct Input {
	Src src;
	int what;
	int status = 0; // CM: event status; CALL: rc
	bool retry = false;
	bool defer = false; // CM CONNECT_REQUEST: no room, defer it
};

int Apply(const wcm_conn_sm &sm, const Input &in, wcm_step *st)
{
	switch (in.src) {
	case CM: {
		wcm_cm_input c;
		c.event = (uint8_t)in.what;
		c.retry = in.retry;
		c.defer = in.defer;
		c.status = in.status;
		return wcm_conn_on_cm(&sm, &c, st);
	}
	case API:
		return wcm_conn_on_api(&sm, (wcm_api)in.what, st);
	case QP:
		return wcm_conn_on_qp(&sm, (wcm_qp_event)in.what, st);
	case TIMER:
		return wcm_conn_on_timer(&sm, (wcm_timer)in.what, st);
	case CALL:
		return wcm_conn_on_call(&sm, (wcm_call)in.what, in.status, st);
	}
	return -1;
}

Input Cm(int ev, int status = 0, bool retry = false)
{
	Input i{CM, ev, status, retry};
	return i;
}
Input Api(int call)
{
	return Input{API, call};
}
Input Qp(int ev)
{
	return Input{QP, ev};
}
Input Timer(int t)
{
	return Input{TIMER, t};
}
Input Call(int call, int rc)
{
	return Input{CALL, call, rc};
}

// A situation: a side and the canonical inputs that reach a state.
struct Situation {
	const char *name;
	wcm_side side;
	std::vector<Input> path;
};

const Input kConnect = Api(WCM_API_CONNECT);
const Input kAddrOk = Cm(WCM_CM_ADDR_RESOLVED);
const Input kRouteOk = Cm(WCM_CM_ROUTE_RESOLVED);
const Input kEst = Cm(WCM_CM_ESTABLISHED);
const Input kDisc = Api(WCM_API_DISCONNECT);
const Input kPeerDisc = Cm(WCM_CM_DISCONNECTED);
const Input kTwExit = Cm(WCM_CM_TIMEWAIT_EXIT);
const Input kDestroy = Api(WCM_API_DESTROY);
const Input kReq = Cm(WCM_CM_CONNECT_REQUEST);
const Input kAccept = Api(WCM_API_ACCEPT);
Input Deferred()
{
	Input i = Cm(WCM_CM_CONNECT_REQUEST);
	i.defer = true;
	return i;
}
const Input kDefer = Deferred();

const std::vector<Situation> &Situations()
{
	static const std::vector<Situation> s = {
		{"a.IDLE", WCM_SIDE_ACTIVE, {}},
		{"a.ADDR_RESOLVING", WCM_SIDE_ACTIVE, {kConnect}},
		{"a.ROUTE_RESOLVING", WCM_SIDE_ACTIVE, {kConnect, kAddrOk}},
		{"a.CONNECTING",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk}},
		{"a.RETRY_WAIT",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk, Cm(WCM_CM_REJECTED, 10, true)}},
		{"a.ESTABLISHED",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk, kEst}},
		{"a.DISCONNECTING",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk, kEst, kDisc}},
		{"a.TIMEWAIT",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk, kEst, kDisc, kPeerDisc}},
		{"a.CLOSED",
		 WCM_SIDE_ACTIVE,
		 {kConnect, kAddrOk, kRouteOk, kEst, kDisc, kPeerDisc,
		  kTwExit}},
		{"a.DESTROYED", WCM_SIDE_ACTIVE, {kConnect, kDestroy}},
		{"p.IDLE", WCM_SIDE_PASSIVE, {}},
		{"p.REQ_RECEIVED", WCM_SIDE_PASSIVE, {kReq}},
		{"p.ACCEPTING", WCM_SIDE_PASSIVE, {kReq, kAccept}},
		{"p.ESTABLISHED", WCM_SIDE_PASSIVE, {kReq, kAccept, kEst}},
		{"p.DISCONNECTING",
		 WCM_SIDE_PASSIVE,
		 {kReq, kAccept, kEst, kDisc}},
		{"p.TIMEWAIT",
		 WCM_SIDE_PASSIVE,
		 {kReq, kAccept, kEst, kPeerDisc}},
		{"p.REJECTED", WCM_SIDE_PASSIVE, {kReq, Api(WCM_API_REJECT)}},
		{"p.CLOSED",
		 WCM_SIDE_PASSIVE,
		 {kReq, kAccept, kEst, kPeerDisc, kTwExit}},
		{"p.DESTROYED", WCM_SIDE_PASSIVE, {kReq, kDestroy}},
		{"p.DEFERRED", WCM_SIDE_PASSIVE, {kDefer}},
	};
	return s;
}

wcm_conn_sm Reach(const Situation &s)
{
	wcm_conn_sm sm;
	EXPECT_EQ(0, wcm_conn_sm_init(&sm, s.side));
	for (const Input &in : s.path) {
		wcm_step st;
		EXPECT_EQ(0, Apply(sm, in, &st)) << s.name;
		sm = st.next;
	}
	return sm;
}

// One-letter codes for the tables: a state letter = returns 0 and moves
// to (or stays in, with actions) that state; '.' = returns 0, no-op;
// otherwise an error with no state change.
char StateCode(unsigned int st)
{
	static const char codes[] = "IARCWQaEDTJXZF";
	return st < WCM_ST_COUNT ? codes[st] : '?';
}

int ErrCode(char c)
{
	switch (c) {
	case 'P':
		return -EPROTO;
	case 'i':
		return -EINVAL;
	case 'l':
		return -EALREADY;
	case 's':
		return -EISCONN;
	case 'b':
		return -EBUSY;
	case 'n':
		return -ENOTCONN;
	}
	return 1; // not an error code
}

bool IsStateCode(char c)
{
	return strchr("IARCWQaEDTJXZF", c) != nullptr;
}

// Check one table row: inputs[k] in situation s must give row[k].
void CheckRow(const Situation &s, const std::vector<Input> &inputs,
	      const std::string &row, const char *what)
{
	ASSERT_EQ(inputs.size(), row.size()) << s.name << " " << what;
	for (size_t k = 0; k < inputs.size(); k++) {
		wcm_conn_sm sm = Reach(s);
		wcm_step st;
		int rc = Apply(sm, inputs[k], &st);
		char want = row[k];
		SCOPED_TRACE(std::string(s.name) + " " + what + " #" +
			     std::to_string(k) + " want '" + want + "'");
		if (want == '.') {
			EXPECT_EQ(0, rc);
			EXPECT_EQ(0u, st.actions);
			EXPECT_EQ(0, memcmp(&st.next, &sm, sizeof(sm)));
		} else if (IsStateCode(want)) {
			EXPECT_EQ(0, rc);
			EXPECT_EQ(want, StateCode(st.next.state));
			if (st.next.state == sm.state) {
				EXPECT_NE(0u, st.actions); // not a no-op
			}
		} else {
			EXPECT_EQ(ErrCode(want), rc);
			EXPECT_EQ(0u, st.actions);
			EXPECT_EQ(0, memcmp(&st.next, &sm, sizeof(sm)));
		}
	}
}

std::vector<Input> AllCm(int status = 0)
{
	std::vector<Input> v;
	for (int e = 0; e < WCM_CM_EVENT_COUNT; e++)
		v.push_back(Cm(e, status));
	return v;
}

std::vector<Input> AllApi()
{
	std::vector<Input> v;
	for (int c = 0; c < WCM_API_COUNT; c++)
		v.push_back(Api(c));
	return v;
}

std::vector<Input> AllQp()
{
	std::vector<Input> v;
	for (int e = 0; e < WCM_QP_EVENT_COUNT; e++)
		v.push_back(Qp(e));
	return v;
}

std::vector<Input> AllTimers()
{
	std::vector<Input> v;
	for (int t = 1; t < WCM_TIMER_COUNT; t++)
		v.push_back(Timer(t));
	return v;
}

std::vector<Input> AllCalls(int rc)
{
	std::vector<Input> v;
	for (int c = 0; c < WCM_CALL_COUNT; c++)
		v.push_back(Call(c, rc));
	return v;
}

// Rows follow Situations(). Legend: IARCWQaEDTJXZF = IDLE, ADDR_RESOLVING,
// ROUTE_RESOLVING, CONNECTING, RETRY_WAIT, REQ_RECEIVED, ACCEPTING,
// ESTABLISHED, DISCONNECTING, TIMEWAIT, REJECTED, CLOSED, DESTROYED,
// DEFERRED.

// Columns: ADDR_RESOLVED ADDR_ERROR ROUTE_RESOLVED ROUTE_ERROR
// CONNECT_REQUEST CONNECT_RESPONSE CONNECT_ERROR UNREACHABLE REJECTED
// ESTABLISHED DISCONNECTED DEVICE_REMOVAL ADDR_CHANGE TIMEWAIT_EXIT
const char *const kCmTable[] = {
	"PPPPPPPPPPPP.P", // a.IDLE
	"RXPPPPPPPPPX.P", // a.ADDR_RESOLVING
	"PPCXPPPPPPPX.P", // a.ROUTE_RESOLVING
	"PPPPPCXXXETX.P", // a.CONNECTING
	"...........X..", // a.RETRY_WAIT
	"PPPPPPPPPPTX.P", // a.ESTABLISHED
	"PPPPPPPPPPTX.P", // a.DISCONNECTING
	"PPPPPPPPPP.X.X", // a.TIMEWAIT
	"..............", // a.CLOSED
	"..............", // a.DESTROYED
	"PPPPQPPPPPPP.P", // p.IDLE
	"PPPPPPXXXPXX.P", // p.REQ_RECEIVED
	"PPPPPPXXXETX.P", // p.ACCEPTING
	"PPPPPPPPPPTX.P", // p.ESTABLISHED
	"PPPPPPPPPPTX.P", // p.DISCONNECTING
	"PPPPPPPPPP.X.X", // p.TIMEWAIT
	"..............", // p.REJECTED
	"..............", // p.CLOSED
	"..............", // p.DESTROYED
	"PPPPQPXXXPXX.P", // p.DEFERRED
};

// Columns: CONNECT ACCEPT REJECT NOTIFY DISCONNECT DESTROY
const char *const kApiTable[] = {
	"AiinnZ", // a.IDLE
	"liinnZ", // a.ADDR_RESOLVING
	"liinnZ", // a.ROUTE_RESOLVING
	"liiCnZ", // a.CONNECTING
	"liinnZ", // a.RETRY_WAIT
	"sii.DZ", // a.ESTABLISHED
	"iiinlZ", // a.DISCONNECTING
	"iiinnZ", // a.TIMEWAIT
	"iiinnZ", // a.CLOSED
	"iiiiii", // a.DESTROYED
	"iiinnZ", // p.IDLE
	"iaJnnZ", // p.REQ_RECEIVED
	"ilbanZ", // p.ACCEPTING
	"iss.DZ", // p.ESTABLISHED
	"innnlZ", // p.DISCONNECTING
	"innnnZ", // p.TIMEWAIT
	"illnnZ", // p.REJECTED
	"innnnZ", // p.CLOSED
	"iiiiii", // p.DESTROYED
	"iiinnZ", // p.DEFERRED
};

// Columns: COMM_EST FATAL RECV
const char *const kQpTable[] = {
	"..I", // a.IDLE
	"..A", // a.ADDR_RESOLVING
	"..R", // a.ROUTE_RESOLVING
	"CXC", // a.CONNECTING
	"..W", // a.RETRY_WAIT
	".DE", // a.ESTABLISHED
	"..D", // a.DISCONNECTING
	"..T", // a.TIMEWAIT
	"..X", // a.CLOSED
	"..Z", // a.DESTROYED
	"..I", // p.IDLE
	"..Q", // p.REQ_RECEIVED
	"aXa", // p.ACCEPTING
	".DE", // p.ESTABLISHED
	"..D", // p.DISCONNECTING
	"..T", // p.TIMEWAIT
	"..J", // p.REJECTED
	"..X", // p.CLOSED
	"..Z", // p.DESTROYED
	"..F", // p.DEFERRED
};

// Columns: STEP DISCONNECT TIMEWAIT RETRY
const char *const kTimerTable[] = {
	"....", // a.IDLE
	"X...", // a.ADDR_RESOLVING
	"X...", // a.ROUTE_RESOLVING
	"X...", // a.CONNECTING
	"...A", // a.RETRY_WAIT
	"....", // a.ESTABLISHED
	".X..", // a.DISCONNECTING
	"..X.", // a.TIMEWAIT
	"....", // a.CLOSED
	"....", // a.DESTROYED
	"....", // p.IDLE
	"J...", // p.REQ_RECEIVED
	"X...", // p.ACCEPTING
	"....", // p.ESTABLISHED
	".X..", // p.DISCONNECTING
	"..X.", // p.TIMEWAIT
	"....", // p.REJECTED
	"....", // p.CLOSED
	"....", // p.DESTROYED
	"J...", // p.DEFERRED
};

// Columns: RESOLVE_ADDR RESOLVE_ROUTE CONNECT ESTABLISH ACCEPT REJECT
// NOTIFY DISCONNECT, each failing with -EIO.
const char *const kCallFailTable[] = {
	"........", // a.IDLE
	"X.......", // a.ADDR_RESOLVING
	".X......", // a.ROUTE_RESOLVING
	"..XX....", // a.CONNECTING
	"........", // a.RETRY_WAIT
	"........", // a.ESTABLISHED
	".......X", // a.DISCONNECTING
	"........", // a.TIMEWAIT
	"........", // a.CLOSED
	"........", // a.DESTROYED
	"........", // p.IDLE
	"........", // p.REQ_RECEIVED
	"....X...", // p.ACCEPTING
	"........", // p.ESTABLISHED
	".......X", // p.DISCONNECTING
	"........", // p.TIMEWAIT
	"........", // p.REJECTED
	"........", // p.CLOSED
	"........", // p.DESTROYED
	"........", // p.DEFERRED
};

// The same calls succeeding: only ESTABLISH while CONNECTING does anything.
const char *const kCallOkTable[] = {
	"........", // a.IDLE
	"........", // a.ADDR_RESOLVING
	"........", // a.ROUTE_RESOLVING
	"...E....", // a.CONNECTING
	"........", // a.RETRY_WAIT
	"........", // a.ESTABLISHED
	"........", // a.DISCONNECTING
	"........", // a.TIMEWAIT
	"........", // a.CLOSED
	"........", // a.DESTROYED
	"........", // p.IDLE
	"........", // p.REQ_RECEIVED
	"........", // p.ACCEPTING
	"........", // p.ESTABLISHED
	"........", // p.DISCONNECTING
	"........", // p.TIMEWAIT
	"........", // p.REJECTED
	"........", // p.CLOSED
	"........", // p.DESTROYED
	"........", // p.DEFERRED
};

TEST(CmConnStateTable, SituationsReachTheirState)
{
	const char *want = "IARCWEDTXZIQaEDTJXZF";
	for (size_t i = 0; i < Situations().size(); i++) {
		EXPECT_EQ(want[i], StateCode(Reach(Situations()[i]).state))
			<< Situations()[i].name;
	}
}

// Check a whole table: one row per situation.
template <size_t N>
void CheckTable(const char *const (&table)[N], const std::vector<Input> &inputs,
		const char *what)
{
	ASSERT_EQ(Situations().size(), N) << what;
	for (size_t i = 0; i < N; i++)
		CheckRow(Situations()[i], inputs, table[i], what);
}

TEST(CmConnStateTable, EveryCmEventInEveryState)
{
	CheckTable(kCmTable, AllCm(), "cm");
}

TEST(CmConnStateTable, EveryApiCallInEveryState)
{
	CheckTable(kApiTable, AllApi(), "api");
}

TEST(CmConnStateTable, EveryQpEventInEveryState)
{
	CheckTable(kQpTable, AllQp(), "qp");
}

TEST(CmConnStateTable, EveryTimerInEveryState)
{
	CheckTable(kTimerTable, AllTimers(), "timer");
}

TEST(CmConnStateTable, EveryCallResultInEveryState)
{
	CheckTable(kCallFailTable, AllCalls(-EIO), "call-fail");
	CheckTable(kCallOkTable, AllCalls(0), "call-ok");
}

TEST(CmConnStateTable, InvalidInputsAreEinvalNoOp)
{
	wcm_conn_sm sm;
	wcm_step st;
	wcm_cm_input c = {WCM_CM_EVENT_COUNT, 0, 0, 0};
	ASSERT_EQ(0, wcm_conn_sm_init(&sm, WCM_SIDE_ACTIVE));
	EXPECT_EQ(-EINVAL, wcm_conn_on_cm(&sm, &c, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_cm(&sm, nullptr, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_cm(nullptr, &c, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_api(&sm, WCM_API_COUNT, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_api(&sm, (wcm_api)-1, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_qp(&sm, WCM_QP_EVENT_COUNT, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_timer(&sm, WCM_TIMER_NONE, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_timer(&sm, WCM_TIMER_COUNT, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_call(&sm, WCM_CALL_COUNT, 0, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_on_api(&sm, WCM_API_CONNECT, nullptr));
	sm.state = WCM_ST_COUNT; // corrupt
	EXPECT_EQ(-EINVAL, wcm_conn_on_api(&sm, WCM_API_CONNECT, &st));
	EXPECT_EQ(-EINVAL, wcm_conn_sm_init(&sm, (wcm_side)2));
	EXPECT_EQ(-EINVAL, wcm_conn_sm_init(nullptr, WCM_SIDE_ACTIVE));
}

// --- important paths, step by step ---------------------------------------

struct Machine {
	wcm_conn_sm sm;
	wcm_step st;
	explicit Machine(wcm_side side)
	{
		EXPECT_EQ(0, wcm_conn_sm_init(&sm, side));
		memset(&st, 0, sizeof(st));
	}
	int Do(const Input &in)
	{
		int rc = Apply(sm, in, &st);
		if (!rc)
			sm = st.next;
		return rc;
	}
	bool Has(uint32_t a) const
	{
		return (st.actions & a) == a;
	}
};

TEST(CmConnStatePath, ActiveConnectResolvesThenConnectsWithTimers)
{
	Machine r(WCM_SIDE_ACTIVE);
	ASSERT_EQ(0, r.Do(kConnect));
	EXPECT_EQ(WCM_ACT_RESOLVE_ADDR | WCM_ACT_ARM_TIMER, r.st.actions);
	EXPECT_EQ(WCM_TIMER_STEP, r.st.timer);
	ASSERT_EQ(0, r.Do(kAddrOk));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_RESOLVE_ROUTE |
			  WCM_ACT_ARM_TIMER,
		  r.st.actions);
	ASSERT_EQ(0, r.Do(kRouteOk));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_CONNECT | WCM_ACT_ARM_TIMER,
		  r.st.actions);
	ASSERT_EQ(0, r.Do(kEst));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_DELIVER_ESTABLISHED |
			  WCM_ACT_FLUSH_HELD_RECV,
		  r.st.actions);
	EXPECT_EQ(WCM_OUT_ESTABLISHED, r.st.outcome);
	EXPECT_EQ(WCM_TIMER_NONE, r.sm.timer);
}

TEST(CmConnStatePath, PassiveDeferredAcceptThenEstablished)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kReq));
	EXPECT_EQ(WCM_ACT_DELIVER_REQUEST | WCM_ACT_ARM_TIMER, r.st.actions);
	// The application decides later: nothing happens meanwhile.
	ASSERT_EQ(0, r.Do(Qp(WCM_QP_COMM_EST)));
	EXPECT_EQ(0u, r.st.actions);
	ASSERT_EQ(0, r.Do(kAccept));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_ACCEPT | WCM_ACT_ARM_TIMER,
		  r.st.actions);
	ASSERT_EQ(0, r.Do(kEst));
	EXPECT_TRUE(r.Has(WCM_ACT_DELIVER_ESTABLISHED));
	EXPECT_EQ(WCM_ST_ESTABLISHED, r.sm.state);
}

TEST(CmConnStatePath, AppRejectSendsRejOnce)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kReq));
	ASSERT_EQ(0, r.Do(Api(WCM_API_REJECT)));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_REJECT, r.st.actions);
	EXPECT_EQ(WCM_OUT_REJECTED_BY_APP, r.st.outcome);
	EXPECT_EQ(-EALREADY, r.Do(Api(WCM_API_REJECT)));
	EXPECT_EQ(-EALREADY, r.Do(kAccept));
	ASSERT_EQ(0, r.Do(kDestroy));
	EXPECT_EQ(WCM_ACT_DESTROY_ID, r.st.actions);
	EXPECT_EQ(WCM_OUT_NONE, r.st.outcome);
}

TEST(CmConnStatePath, DecisionTimeoutRejectsAndReportsTimeout)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kReq));
	ASSERT_EQ(0, r.Do(Timer(WCM_TIMER_STEP)));
	EXPECT_EQ(WCM_ST_REJECTED, r.sm.state);
	EXPECT_EQ(WCM_ACT_REJECT | WCM_ACT_DELIVER_ERROR, r.st.actions);
	EXPECT_EQ(WCM_ERR_TIMEOUT, r.st.error);
	EXPECT_EQ(-EALREADY, r.Do(kAccept)); // too late
}

TEST(CmConnStatePath, CommEstBeforeEstablishedCallsNotifyEisconnIsSuccess)
{
	for (wcm_side side : {WCM_SIDE_ACTIVE, WCM_SIDE_PASSIVE}) {
		Machine r(side);
		for (const Input &in : Situations()[side ? 12 : 3].path) {
			ASSERT_EQ(0, r.Do(in));
		}
		uint8_t st = r.sm.state;
		ASSERT_EQ(0, r.Do(Qp(WCM_QP_COMM_EST)));
		EXPECT_EQ(WCM_ACT_NOTIFY, r.st.actions);
		EXPECT_EQ(st, r.sm.state);
		// rdma_notify said EISCONN: the CM was faster. Fine.
		ASSERT_EQ(0, r.Do(Call(WCM_CALL_NOTIFY, -EISCONN)));
		EXPECT_EQ(0u, r.st.actions);
		EXPECT_EQ(st, r.sm.state);
		// Any other notify failure changes nothing either: the CM's
		// ESTABLISHED or the step timer settles it.
		ASSERT_EQ(0, r.Do(Call(WCM_CALL_NOTIFY, -EIO)));
		EXPECT_EQ(0u, r.st.actions);
		ASSERT_EQ(0, r.Do(kEst));
		EXPECT_TRUE(r.Has(WCM_ACT_DELIVER_ESTABLISHED));
		// COMM_EST after ESTABLISHED: no notify.
		ASSERT_EQ(0, r.Do(Qp(WCM_QP_COMM_EST)));
		EXPECT_EQ(0u, r.st.actions);
	}
}

TEST(CmConnStatePath, ApiNotifyWhenEstablishedIsSuccessWithoutCall)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[5].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Api(WCM_API_NOTIFY)));
	EXPECT_EQ(0u, r.st.actions);
	EXPECT_EQ(0, wcm_notify_event_check(IBV_EVENT_COMM_EST));
	EXPECT_EQ(-EINVAL, wcm_notify_event_check(IBV_EVENT_QP_FATAL));
	EXPECT_EQ(-EINVAL, wcm_notify_event_check(IBV_EVENT_SQ_DRAINED));
}

TEST(CmConnStatePath, EarlyReceivesHeldThenFlushedAfterOnEstablished)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kReq));
	ASSERT_EQ(0, r.Do(kAccept));
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, r.Do(Qp(WCM_QP_RECV)));
		EXPECT_EQ(WCM_ACT_HOLD_RECV, r.st.actions);
	}
	ASSERT_EQ(0, r.Do(kEst));
	EXPECT_TRUE(
		r.Has(WCM_ACT_DELIVER_ESTABLISHED | WCM_ACT_FLUSH_HELD_RECV));
	// Execution order is bit order: on_established, then the held ones.
	EXPECT_LT((unsigned)WCM_ACT_DELIVER_ESTABLISHED,
		  (unsigned)WCM_ACT_FLUSH_HELD_RECV);
	ASSERT_EQ(0, r.Do(Qp(WCM_QP_RECV)));
	EXPECT_EQ(WCM_ACT_DELIVER_RECV, r.st.actions);
}

TEST(CmConnStatePath, HeldReceivesDroppedWhenHandshakeFails)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[3].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Qp(WCM_QP_RECV)));
	ASSERT_EQ(0, r.Do(Cm(WCM_CM_CONNECT_ERROR)));
	EXPECT_TRUE(r.Has(WCM_ACT_DROP_HELD_RECV | WCM_ACT_QP_ERROR |
			  WCM_ACT_QUARANTINE_QP | WCM_ACT_DELIVER_ERROR));
	EXPECT_FALSE(r.Has(WCM_ACT_FLUSH_HELD_RECV));
	EXPECT_EQ(WCM_ERR_CONNECT, r.st.error);
	ASSERT_EQ(0, r.Do(Qp(WCM_QP_RECV))); // a late completion
	EXPECT_EQ(WCM_ACT_DROP_RECV, r.st.actions);
}

TEST(CmConnStatePath, PeerDisconnectSendsDrepDeliversOnceThenTimewait)
{
	Machine r(WCM_SIDE_PASSIVE);
	for (const Input &in : Situations()[13].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(kPeerDisc));
	EXPECT_EQ(WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR |
			  WCM_ACT_DELIVER_DISCONNECTED | WCM_ACT_ARM_TIMER,
		  r.st.actions);
	EXPECT_EQ(WCM_TIMER_TIMEWAIT, r.st.timer);
	EXPECT_EQ(WCM_OUT_DISCONNECTED, r.st.outcome);
	ASSERT_EQ(0, r.Do(kPeerDisc)); // duplicate: not delivered again
	EXPECT_EQ(0u, r.st.actions);
	ASSERT_EQ(0, r.Do(kTwExit));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_RECYCLE_QP, r.st.actions);
	EXPECT_EQ(WCM_ST_CLOSED, r.sm.state);
	ASSERT_EQ(0, r.Do(kDestroy));
	EXPECT_EQ(WCM_ACT_DESTROY_ID, r.st.actions);
}

TEST(CmConnStatePath, LocalDisconnectWaitsBoundedForDisconnected)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[5].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(kDisc));
	EXPECT_EQ(WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR | WCM_ACT_ARM_TIMER,
		  r.st.actions);
	EXPECT_EQ(WCM_TIMER_DISCONNECT, r.st.timer);
	// Data that completed before the flush is still delivered.
	ASSERT_EQ(0, r.Do(Qp(WCM_QP_RECV)));
	EXPECT_EQ(WCM_ACT_DELIVER_RECV, r.st.actions);
	ASSERT_EQ(0, r.Do(kPeerDisc));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_DELIVER_DISCONNECTED |
			  WCM_ACT_ARM_TIMER,
		  r.st.actions);
	EXPECT_EQ(WCM_ST_TIMEWAIT, r.sm.state);
}

TEST(CmConnStatePath, LostDreqOrDrepEndsInForcedTeardown)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[6].path) // DISCONNECTING
		ASSERT_EQ(0, r.Do(in));
	ASSERT_EQ(0, r.Do(Timer(WCM_TIMER_DISCONNECT)));
	EXPECT_EQ(WCM_ST_CLOSED, r.sm.state);
	EXPECT_EQ(WCM_ACT_DELIVER_DISCONNECTED | WCM_ACT_QUARANTINE_QP,
		  r.st.actions);
	EXPECT_EQ(WCM_OUT_DISCONNECTED, r.st.outcome);
	// The DISCONNECTED that finally arrives is ignored.
	ASSERT_EQ(0, r.Do(kPeerDisc));
	EXPECT_EQ(0u, r.st.actions);
}

TEST(CmConnStatePath, FailedDisconnectCallForcesTeardown)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[6].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Call(WCM_CALL_DISCONNECT, -EINVAL)));
	EXPECT_EQ(WCM_ST_CLOSED, r.sm.state);
	EXPECT_TRUE(r.Has(WCM_ACT_DELIVER_DISCONNECTED | WCM_ACT_DISARM_TIMER));
}

TEST(CmConnStatePath, MissingTimewaitExitIsBoundedAndQuarantinesQp)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[7].path) // TIMEWAIT
		ASSERT_EQ(0, r.Do(in));
	ASSERT_EQ(0, r.Do(Timer(WCM_TIMER_TIMEWAIT)));
	EXPECT_EQ(WCM_ST_CLOSED, r.sm.state);
	EXPECT_EQ(WCM_ACT_QUARANTINE_QP, r.st.actions);
	EXPECT_FALSE(r.Has(WCM_ACT_DELIVER_DISCONNECTED)); // already done
}

TEST(CmConnStatePath, StaleRejectRetriesWithFreshIdAndQp)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[3].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Cm(WCM_CM_REJECTED, 10, true)));
	EXPECT_EQ(WCM_ST_RETRY_WAIT, r.sm.state);
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_QP_ERROR |
			  WCM_ACT_DROP_HELD_RECV | WCM_ACT_ARM_TIMER |
			  WCM_ACT_QUARANTINE_QP,
		  r.st.actions);
	EXPECT_EQ(WCM_TIMER_RETRY, r.st.timer);
	EXPECT_EQ(WCM_OUT_RETRIED, r.st.outcome);
	EXPECT_EQ(10, r.st.rej_status);
	EXPECT_EQ(1, r.sm.attempt);
	ASSERT_EQ(0, r.Do(Timer(WCM_TIMER_RETRY)));
	EXPECT_EQ(WCM_ACT_RESTART | WCM_ACT_RESOLVE_ADDR | WCM_ACT_ARM_TIMER,
		  r.st.actions);
	EXPECT_EQ(WCM_ST_ADDR_RESOLVING, r.sm.state);
	ASSERT_EQ(0, r.Do(kAddrOk));
	ASSERT_EQ(0, r.Do(kRouteOk));
	ASSERT_EQ(0, r.Do(Cm(WCM_CM_REJECTED, 10, true)));
	EXPECT_EQ(2, r.sm.attempt);
}

TEST(CmConnStatePath, RejectWithoutRetryDeliversOnRejectedWithReason)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[3].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Cm(WCM_CM_REJECTED, 28, false)));
	EXPECT_EQ(WCM_ST_CLOSED, r.sm.state);
	EXPECT_TRUE(r.Has(WCM_ACT_DELIVER_REJECTED));
	EXPECT_EQ(28, r.st.rej_status);
	EXPECT_EQ(WCM_OUT_REJECTED_BY_PEER, r.st.outcome);
}

TEST(CmConnStatePath, ConnectResponseEstablishesThroughCallResult)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[3].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(Cm(WCM_CM_CONNECT_RESPONSE)));
	EXPECT_EQ(WCM_ACT_ESTABLISH, r.st.actions);
	ASSERT_EQ(0, r.Do(Call(WCM_CALL_ESTABLISH, 0)));
	EXPECT_TRUE(r.Has(WCM_ACT_DELIVER_ESTABLISHED | WCM_ACT_DISARM_TIMER));
	EXPECT_EQ(WCM_ST_ESTABLISHED, r.sm.state);
}

TEST(CmConnStatePath, ErrorKindsMapToOnError)
{
	struct {
		size_t situation;
		Input in;
		wcm_conn_error want;
	} cases[] = {
		{1, Cm(WCM_CM_ADDR_ERROR), WCM_ERR_ADDRESS},
		{1, Call(WCM_CALL_RESOLVE_ADDR, -ENODEV), WCM_ERR_ADDRESS},
		{2, Cm(WCM_CM_ROUTE_ERROR), WCM_ERR_ROUTE},
		{2, Call(WCM_CALL_RESOLVE_ROUTE, -EIO), WCM_ERR_ROUTE},
		{3, Cm(WCM_CM_UNREACHABLE), WCM_ERR_UNREACHABLE},
		{3, Cm(WCM_CM_CONNECT_ERROR), WCM_ERR_CONNECT},
		{3, Call(WCM_CALL_CONNECT, -EIO), WCM_ERR_CONNECT},
		{3, Qp(WCM_QP_FATAL), WCM_ERR_CONNECT},
		{1, Timer(WCM_TIMER_STEP), WCM_ERR_TIMEOUT},
		{2, Timer(WCM_TIMER_STEP), WCM_ERR_TIMEOUT},
		{3, Timer(WCM_TIMER_STEP), WCM_ERR_TIMEOUT},
		{12, Timer(WCM_TIMER_STEP), WCM_ERR_TIMEOUT},
		{3, Cm(WCM_CM_DEVICE_REMOVAL), WCM_ERR_DEVICE},
		{11, Cm(WCM_CM_REJECTED), WCM_ERR_CONNECT},
		{12, Cm(WCM_CM_UNREACHABLE), WCM_ERR_UNREACHABLE},
		{12, Call(WCM_CALL_ACCEPT, -ENOMEM), WCM_ERR_CONNECT},
	};
	for (auto &c : cases) {
		const Situation &s = Situations()[c.situation];
		wcm_conn_sm sm = Reach(s);
		wcm_step st;
		ASSERT_EQ(0, Apply(sm, c.in, &st)) << s.name;
		EXPECT_TRUE(st.actions & WCM_ACT_DELIVER_ERROR) << s.name;
		EXPECT_EQ(c.want, st.error) << s.name;
		EXPECT_EQ(WCM_OUT_FAILED, st.outcome) << s.name;
	}
}

TEST(CmConnStatePath, FailedAcceptStillRejectsThePeer)
{
	wcm_conn_sm sm = Reach(Situations()[12]);
	wcm_step st;
	ASSERT_EQ(0, wcm_conn_on_call(&sm, WCM_CALL_ACCEPT, -EIO, &st));
	EXPECT_TRUE(st.actions & WCM_ACT_REJECT);
}

TEST(CmConnStatePath, DestroyWhileEstablishedDeliversDisconnectedOnce)
{
	Machine r(WCM_SIDE_ACTIVE);
	for (const Input &in : Situations()[5].path) {
		ASSERT_EQ(0, r.Do(in));
	}
	ASSERT_EQ(0, r.Do(kDestroy));
	EXPECT_EQ(WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR |
			  WCM_ACT_DELIVER_DISCONNECTED | WCM_ACT_QUARANTINE_QP |
			  WCM_ACT_DESTROY_ID,
		  r.st.actions);
	EXPECT_EQ(WCM_OUT_DISCONNECTED, r.st.outcome);
	EXPECT_EQ(-EINVAL, r.Do(kDestroy));
	ASSERT_EQ(0, r.Do(kPeerDisc));
	EXPECT_EQ(0u, r.st.actions);
}

TEST(CmConnStatePath, DestroyPendingRequestRejectsIt)
{
	wcm_conn_sm sm = Reach(Situations()[11]);
	wcm_step st;
	ASSERT_EQ(0, wcm_conn_on_api(&sm, WCM_API_DESTROY, &st));
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_REJECT | WCM_ACT_DESTROY_ID,
		  st.actions);
	EXPECT_EQ(WCM_OUT_ABORTED, st.outcome);
}

// Deferral: a request the owner has no room for waits, unseen by the
// application, with a timer; it is presented later, refused when the timer
// runs out, or dropped when its peer goes away - never delivered as an
// error to an application that never saw it.
TEST(CmConnStatePath, DeferredRequestWaitsWithATimerThenIsPresented)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kDefer));
	EXPECT_EQ(WCM_ST_DEFERRED, r.sm.state);
	EXPECT_EQ(WCM_ACT_ARM_TIMER, r.st.actions); // nothing delivered
	EXPECT_EQ(WCM_TIMER_STEP, r.sm.timer);
	EXPECT_EQ(WCM_OUT_DEFERRED, r.st.outcome);
	ASSERT_EQ(0, r.Do(kDefer)); // still no room: nothing changes
	EXPECT_EQ(0u, r.st.actions);
	ASSERT_EQ(0, r.Do(kReq)); // admitted: presented like a new request
	EXPECT_EQ(WCM_ST_REQ_RECEIVED, r.sm.state);
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_DELIVER_REQUEST |
			  WCM_ACT_ARM_TIMER,
		  r.st.actions);
	EXPECT_EQ(WCM_OUT_ADMITTED, r.st.outcome);
	EXPECT_EQ(0, r.sm.flags & WCM_SM_FINAL);
	ASSERT_EQ(0, r.Do(kAccept));
	ASSERT_EQ(0, r.Do(kEst));
	EXPECT_EQ(WCM_OUT_ESTABLISHED, r.st.outcome);
}

TEST(CmConnStatePath, DeferralThatRunsOutIsRefusedWithoutADelivery)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kDefer));
	EXPECT_EQ(-EINVAL, r.Do(kAccept)); // the application never saw it
	EXPECT_EQ(-EINVAL, r.Do(Api(WCM_API_REJECT)));
	ASSERT_EQ(0, r.Do(Timer(WCM_TIMER_STEP)));
	EXPECT_EQ(WCM_ST_REJECTED, r.sm.state);
	EXPECT_EQ(WCM_ACT_REJECT, r.st.actions);
	EXPECT_EQ(WCM_OUT_DEFER_EXPIRED, r.st.outcome);
	EXPECT_NE(0, r.sm.flags & WCM_SM_FINAL);
	EXPECT_EQ(WCM_TIMER_NONE, r.sm.timer);
}

TEST(CmConnStatePath, PeerOrDeviceGoneWhileDeferredIsLostQuietly)
{
	const int gone[] = {WCM_CM_REJECTED, WCM_CM_CONNECT_ERROR,
			    WCM_CM_UNREACHABLE, WCM_CM_DISCONNECTED,
			    WCM_CM_DEVICE_REMOVAL};
	for (int ev : gone) {
		Machine r(WCM_SIDE_PASSIVE);
		ASSERT_EQ(0, r.Do(kDefer));
		ASSERT_EQ(0, r.Do(Cm(ev, 28)));
		EXPECT_EQ(WCM_ST_CLOSED, r.sm.state) << ev;
		EXPECT_EQ(WCM_ACT_DISARM_TIMER, r.st.actions) << ev;
		EXPECT_EQ(WCM_OUT_DEFER_LOST, r.st.outcome) << ev;
	}
}

TEST(CmConnStatePath, DestroyWhileDeferredRefusesThePeer)
{
	Machine r(WCM_SIDE_PASSIVE);
	ASSERT_EQ(0, r.Do(kDefer));
	ASSERT_EQ(0, r.Do(kDestroy));
	EXPECT_EQ(WCM_ST_DESTROYED, r.sm.state);
	EXPECT_EQ(WCM_ACT_DISARM_TIMER | WCM_ACT_REJECT | WCM_ACT_DESTROY_ID,
		  r.st.actions);
	EXPECT_EQ(WCM_OUT_ABORTED, r.st.outcome);
}

TEST(CmConnStatePath, QpFatalWhenEstablishedDisconnects)
{
	wcm_conn_sm sm = Reach(Situations()[13]);
	wcm_step st;
	ASSERT_EQ(0, wcm_conn_on_qp(&sm, WCM_QP_FATAL, &st));
	EXPECT_EQ(WCM_ST_DISCONNECTING, st.next.state);
	EXPECT_EQ(WCM_ACT_DISCONNECT | WCM_ACT_QP_ERROR | WCM_ACT_ARM_TIMER,
		  st.actions);
	EXPECT_EQ(WCM_TIMER_DISCONNECT, st.timer);
}

TEST(CmConnStatePath, DeviceRemovalWhenEstablishedDeliversDisconnected)
{
	wcm_conn_sm sm = Reach(Situations()[5]);
	wcm_step st;
	wcm_cm_input c = {WCM_CM_DEVICE_REMOVAL, 0, 0, 0};
	ASSERT_EQ(0, wcm_conn_on_cm(&sm, &c, &st));
	EXPECT_EQ(WCM_ST_CLOSED, st.next.state);
	EXPECT_EQ(WCM_ACT_QP_ERROR | WCM_ACT_DELIVER_DISCONNECTED |
			  WCM_ACT_QUARANTINE_QP,
		  st.actions);
}

TEST(CmConnStatePath, StaleTimerExpiryIsIgnored)
{
	// The step timer of CONNECTING fires after ESTABLISHED disarmed it.
	wcm_conn_sm sm = Reach(Situations()[5]);
	wcm_step st;
	ASSERT_EQ(0, wcm_conn_on_timer(&sm, WCM_TIMER_STEP, &st));
	EXPECT_EQ(0u, st.actions);
	EXPECT_EQ(WCM_ST_ESTABLISHED, st.next.state);
}

TEST(CmConnStatePath, ActionBitsAreInExecutionOrder)
{
	// Timers go first, QP release and id destruction last, the
	// rdma_cm calls before the callbacks that report their effect.
	EXPECT_LT((unsigned)WCM_ACT_DISARM_TIMER, (unsigned)WCM_ACT_HOLD_RECV);
	EXPECT_LT((unsigned)WCM_ACT_RESTART, (unsigned)WCM_ACT_RESOLVE_ADDR);
	EXPECT_LT((unsigned)WCM_ACT_DISCONNECT, (unsigned)WCM_ACT_QP_ERROR);
	EXPECT_LT((unsigned)WCM_ACT_QP_ERROR,
		  (unsigned)WCM_ACT_DELIVER_DISCONNECTED);
	EXPECT_LT((unsigned)WCM_ACT_DELIVER_ESTABLISHED,
		  (unsigned)WCM_ACT_FLUSH_HELD_RECV);
	EXPECT_LT((unsigned)WCM_ACT_DELIVER_DISCONNECTED,
		  (unsigned)WCM_ACT_ARM_TIMER);
	EXPECT_LT((unsigned)WCM_ACT_ARM_TIMER, (unsigned)WCM_ACT_RECYCLE_QP);
	EXPECT_LT((unsigned)WCM_ACT_QUARANTINE_QP,
		  (unsigned)WCM_ACT_DESTROY_ID);
}

TEST(CmConnStateMap, RdmaCmEventsMapOneToOne)
{
	struct {
		int rdma;
		wcm_cm_event wcm;
	} m[] = {
		{RDMA_CM_EVENT_ADDR_RESOLVED, WCM_CM_ADDR_RESOLVED},
		{RDMA_CM_EVENT_REJECTED, WCM_CM_REJECTED},
		{RDMA_CM_EVENT_ESTABLISHED, WCM_CM_ESTABLISHED},
		{RDMA_CM_EVENT_TIMEWAIT_EXIT, WCM_CM_TIMEWAIT_EXIT},
		{RDMA_CM_EVENT_CONNECT_RESPONSE, WCM_CM_CONNECT_RESPONSE},
	};
	for (auto &e : m) {
		wcm_cm_event out;
		ASSERT_EQ(0, wcm_cm_event_from_rdma(e.rdma, &out));
		EXPECT_EQ(e.wcm, out);
	}
	wcm_cm_event out;
	EXPECT_EQ(-ENOTSUP,
		  wcm_cm_event_from_rdma(RDMA_CM_EVENT_MULTICAST_JOIN, &out));
	EXPECT_EQ(-EINVAL,
		  wcm_cm_event_from_rdma(RDMA_CM_EVENT_REJECTED, nullptr));
	std::vector<bool> hit(WCM_CM_EVENT_COUNT);
	for (int ev = 0; ev < 64; ev++)
		if (!wcm_cm_event_from_rdma(ev, &out))
			hit[out] = true;
	for (int e = 0; e < WCM_CM_EVENT_COUNT; e++) {
		EXPECT_TRUE(hit[e]) << e;
	}
	EXPECT_STREQ("ESTABLISHED", wcm_conn_state_name(WCM_ST_ESTABLISHED));
	EXPECT_STREQ("?", wcm_conn_state_name(WCM_ST_COUNT));
}

// --- random walks: the guarantees hold on every path ---------------------

bool Waits(unsigned int st)
{
	switch (st) {
	case WCM_ST_ADDR_RESOLVING:
	case WCM_ST_ROUTE_RESOLVING:
	case WCM_ST_CONNECTING:
	case WCM_ST_RETRY_WAIT:
	case WCM_ST_REQ_RECEIVED:
	case WCM_ST_ACCEPTING:
	case WCM_ST_DISCONNECTING:
	case WCM_ST_TIMEWAIT:
	case WCM_ST_DEFERRED:
		return true;
	}
	return false;
}

bool Terminal(unsigned int st)
{
	return st == WCM_ST_REJECTED || st == WCM_ST_CLOSED ||
	       st == WCM_ST_DESTROYED;
}

struct Tally {
	int established = 0, disconnected = 0, finals = 0, destroy_id = 0;
	int qp_taken = 0, qp_released = 0;
};

Input RandomInput(std::mt19937 &rng)
{
	switch (rng() % 5) {
	case 0: {
		int statuses[] = {0, 10, 28};
		Input in = Cm(rng() % WCM_CM_EVENT_COUNT, statuses[rng() % 3],
			      rng() % 2);
		in.defer = rng() % 2;
		return in;
	}
	case 1:
		return Api(rng() % WCM_API_COUNT);
	case 2:
		return Qp(rng() % WCM_QP_EVENT_COUNT);
	case 3:
		return Timer(1 + rng() % (WCM_TIMER_COUNT - 1));
	default: {
		int rcs[] = {0, -EIO, -EISCONN};
		return Call(rng() % WCM_CALL_COUNT, rcs[rng() % 3]);
	}
	}
}

// Check one step; returns false (with a gtest failure) on a violation.
void CheckStep(const wcm_conn_sm &cur, const Input &in, int rc,
	       const wcm_step &st, Tally &t)
{
	if (rc) {
		ASSERT_EQ(0u, st.actions);
		ASSERT_EQ(0, memcmp(&st.next, &cur, sizeof(cur)));
		return;
	}
	const wcm_conn_sm &n = st.next;
	uint32_t a = st.actions;
	// Never a hang: waiting states have a timer, the others none.
	ASSERT_EQ(Waits(n.state), n.timer != WCM_TIMER_NONE)
		<< wcm_conn_state_name(n.state);
	if (a & WCM_ACT_ARM_TIMER) {
		ASSERT_EQ(st.timer, n.timer);
	}
	// A receive is held, delivered or dropped: exactly one.
	int recv = !!(a & WCM_ACT_HOLD_RECV) + !!(a & WCM_ACT_DELIVER_RECV) +
		   !!(a & WCM_ACT_DROP_RECV);
	ASSERT_EQ(in.src == QP && in.what == WCM_QP_RECV ? 1 : 0, recv);
	if (a & WCM_ACT_HOLD_RECV) {
		ASSERT_EQ(0, t.established);
	}
	if (a & WCM_ACT_DELIVER_RECV) {
		ASSERT_EQ(1, t.established);
	}
	ASSERT_EQ(!!(a & WCM_ACT_FLUSH_HELD_RECV),
		  !!(a & WCM_ACT_DELIVER_ESTABLISHED));
	// Callbacks and outcomes agree.
	if (a & WCM_ACT_DELIVER_ESTABLISHED) {
		ASSERT_EQ(WCM_OUT_ESTABLISHED, st.outcome);
		t.established++;
	}
	if (a & WCM_ACT_DELIVER_DISCONNECTED) {
		ASSERT_EQ(WCM_OUT_DISCONNECTED, st.outcome);
		ASSERT_EQ(1, t.established);
		t.disconnected++;
	}
	ASSERT_EQ(!!(a & WCM_ACT_DELIVER_ERROR), st.outcome == WCM_OUT_FAILED);
	ASSERT_EQ(!!(a & WCM_ACT_DELIVER_ERROR), st.error != WCM_ERR_NONE);
	ASSERT_EQ(!!(a & WCM_ACT_DELIVER_REJECTED),
		  st.outcome == WCM_OUT_REJECTED_BY_PEER);
	if (st.outcome >= WCM_OUT_REJECTED_BY_APP)
		t.finals++;
	ASSERT_LE(t.established, 1);
	ASSERT_LE(t.disconnected, 1);
	ASSERT_LE(t.finals, 1);
	// QPs: taken by CONNECT/ACCEPT, released exactly once each.
	if (a & (WCM_ACT_CONNECT | WCM_ACT_ACCEPT))
		t.qp_taken++;
	if (a & (WCM_ACT_RECYCLE_QP | WCM_ACT_QUARANTINE_QP))
		t.qp_released++;
	ASSERT_FALSE((a & WCM_ACT_RECYCLE_QP) && (a & WCM_ACT_QUARANTINE_QP));
	ASSERT_GE(t.qp_taken, t.qp_released);
	ASSERT_LE(t.qp_taken - t.qp_released, 1);
	if (a & WCM_ACT_DESTROY_ID)
		t.destroy_id++;
	ASSERT_LE(t.destroy_id, 1);
	if (Terminal(n.state)) {
		// The end: accounted once, QP returned, on_disconnected
		// delivered iff on_established was.
		ASSERT_EQ(1, t.finals);
		ASSERT_EQ(t.qp_taken, t.qp_released);
		ASSERT_EQ(t.established, t.disconnected);
	}
	if (Terminal(cur.state)) {
		uint32_t allowed = WCM_ACT_DROP_RECV | WCM_ACT_DESTROY_ID;
		ASSERT_EQ(0u, a & ~allowed);
	}
}

TEST(CmConnStateWalk, GuaranteesHoldOnRandomPaths)
{
	std::mt19937 rng(12345);
	int steps = 0, terminal = 0;
	for (int walk = 0; walk < 10000; walk++) {
		const Situation &s = Situations()[walk % Situations().size()];
		wcm_conn_sm sm;
		ASSERT_EQ(0, wcm_conn_sm_init(&sm, s.side));
		Tally t;
		std::vector<Input> path = s.path;
		size_t prefix = path.size();
		for (int k = 0; k < 40; k++)
			path.push_back(RandomInput(rng));
		for (size_t k = 0; k < path.size(); k++) {
			wcm_step st;
			int rc = Apply(sm, path[k], &st);
			if (k < prefix) {
				ASSERT_EQ(0, rc);
			}
			CheckStep(sm, path[k], rc, st, t);
			if (HasFatalFailure()) {
				ADD_FAILURE() << "walk " << walk << " step "
					      << k << " from "
					      << wcm_conn_state_name(sm.state);
				return;
			}
			if (!rc)
				sm = st.next;
			steps++;
		}
		terminal += Terminal(sm.state);
	}
	EXPECT_GT(terminal, 500); // the walks do reach the ends
	EXPECT_GT(steps, 250000);
}

} // namespace
