/*
 * fakedcbnl.so: an LD_PRELOAD shim that lets Debian's lldpad run IEEE 802.1Qaz DCBX on an
 * interface without dcbnl support (a veth), so that it can act as a real DCBX peer of the
 * simulated adapter (tests/src/interop, /work/shared/spec/dcbx-peer.md section 4).
 *
 * lldpad's 802.1Qaz module talks to the kernel's dcbnl through libnl: it sends an RTM_GETDCB or
 * RTM_SETDCB request with nl_send_auto_complete() and, for the GET commands, reads the answer
 * with nl_recv(). veth has no dcbnl_ops, so the kernel answers every request with an
 * NLMSG_ERROR (-EOPNOTSUPP) and lldpad gives up ("no GDCBX support").
 *
 * This shim interposes those two libnl functions. For the interfaces named in FAKEDCBNL_IFACES
 * (comma separated) it:
 *   - notes each RTM_GETDCB/RTM_SETDCB request (command, interface, sequence number) per socket;
 *   - replaces the kernel's answer to DCB_CMD_GDCBX with DCB_ATTR_DCBX =
 *     DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE (0x09);
 *   - replaces the kernel's answer to DCB_CMD_IEEE_GET with DCB_ATTR_IEEE holding ETS
 *     (ets_cap 8), PFC (pfc_cap 8) and the APP table of the fake NIC;
 *   - decodes DCB_CMD_IEEE_SET / DCB_CMD_IEEE_DEL, logs them to stderr and keeps them as the fake
 *     NIC's state (the APP table IEEE_GET returns is built from it).
 * The requests themselves still go to the kernel (which refuses them); SETs are not answered
 * through libnl by lldpad, so nothing needs replacing there.
 *
 * Log lines (stderr, always; the harness parses them, keep the format stable):
 *   fakedcbnl: IF: IEEE_SET ETS willing=W ets_cap=C cbs=B prio_tc=8xN tc_tx_bw=8xN tc_rx_bw=8xN
 *              tc_tsa=8xN reco_prio_tc=8xN tc_reco_bw=8xN tc_reco_tsa=8xN      (one line)
 *   fakedcbnl: IF: IEEE_SET PFC pfc_cap=C pfc_en=0xHH mbc=M delay=D
 *   fakedcbnl: IF: IEEE_SET APP add priority=P selector=S protocol=N
 *   fakedcbnl: IF: IEEE_DEL APP del priority=P selector=S protocol=N
 * With FAKEDCBNL_DEBUG=1 also: the answers it fakes and the dcbnl commands it sees but does not
 * handle ("fakedcbnl: IF: GDCBX -> 0x09", "fakedcbnl: IF: cmd N not faked").
 *
 * Build: gcc -shared -fPIC -O2 -Wall -o fakedcbnl.so fakedcbnl.c -ldl
 * Needs only libc and the kernel UAPI headers: the libnl types it touches are opaque here and
 * the only libnl function it calls besides the two it wraps is nlmsg_hdr(), found with dlsym.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/dcbnl.h>

struct nl_sock;
struct nl_msg;
struct ucred;

#define MAX_IFACES 8
#define MAX_SOCKS 16
#define MAX_APPS 64
#define IFNAME_LEN 16

/* The fake NIC of one interface. */
struct fake_nic {
	char ifname[IFNAME_LEN];
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct dcb_app apps[MAX_APPS];
	int napps;
};

/* The last dcbnl request sent on one libnl socket. */
struct pending {
	const struct nl_sock *sk;
	int cmd;
	uint32_t seq;
	struct fake_nic *nic;
};

static struct fake_nic nics[MAX_IFACES];
static int nnics = -1; /* -1: FAKEDCBNL_IFACES not read yet */
static struct pending pendings[MAX_SOCKS];
static int debug;

static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fakedcbnl: %s\n", line);
	fflush(stderr);
}

static void load_config(void)
{
	const char *env, *p;

	if (nnics >= 0)
		return;
	nnics = 0;
	env = getenv("FAKEDCBNL_DEBUG");
	debug = env && *env && strcmp(env, "0") != 0;
	env = getenv("FAKEDCBNL_IFACES");
	for (p = env; p && *p && nnics < MAX_IFACES;) {
		size_t n = strcspn(p, ", ");

		if (n > 0 && n < IFNAME_LEN) {
			struct fake_nic *nic = &nics[nnics++];

			memset(nic, 0, sizeof(*nic));
			memcpy(nic->ifname, p, n);
			nic->ets.ets_cap = IEEE_8021QAZ_MAX_TCS;
			nic->pfc.pfc_cap = IEEE_8021QAZ_MAX_TCS;
		}
		p += n;
		p += strspn(p, ", ");
	}
	if (debug)
		say("faking dcbnl for %d interface(s): %s", nnics, env ? env : "(none)");
}

static struct fake_nic *find_nic(const char *ifname, size_t len)
{
	int i;

	for (i = 0; i < nnics; i++) {
		size_t n = strnlen(nics[i].ifname, IFNAME_LEN);

		if (len >= n && memcmp(nics[i].ifname, ifname, n) == 0 &&
		    (len == n || ifname[n] == '\0'))
			return &nics[i];
	}
	return NULL;
}

static struct pending *pending_for(const struct nl_sock *sk, int create)
{
	int i, free_slot = -1;

	for (i = 0; i < MAX_SOCKS; i++) {
		if (pendings[i].sk == sk)
			return &pendings[i];
		if (!pendings[i].sk && free_slot < 0)
			free_slot = i;
	}
	if (!create)
		return NULL;
	if (free_slot < 0)
		free_slot = 0; /* recycle: lldpad keeps few sockets */
	memset(&pendings[free_slot], 0, sizeof(pendings[free_slot]));
	pendings[free_slot].sk = sk;
	return &pendings[free_slot];
}

/* Iterates the attributes in [data, data+len). */
#define FOR_ATTRS(a, data, len)                                                              \
	for (struct nlattr *a = (struct nlattr *)(data);                                     \
	     (char *)a + NLA_HDRLEN <= (char *)(data) + (len) && a->nla_len >= NLA_HDRLEN && \
	     (char *)a + a->nla_len <= (char *)(data) + (len);                              \
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

#define ATTR_TYPE(a) ((a)->nla_type & NLA_TYPE_MASK)
#define ATTR_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a) ((int)(a)->nla_len - NLA_HDRLEN)

static void fmt8(char *out, size_t size, const uint8_t *v)
{
	snprintf(out, size, "%u,%u,%u,%u,%u,%u,%u,%u", v[0], v[1], v[2], v[3], v[4], v[5], v[6],
		 v[7]);
}

static void app_add(struct fake_nic *nic, const struct dcb_app *app)
{
	int i;

	say("%s: IEEE_SET APP add priority=%u selector=%u protocol=%u", nic->ifname, app->priority,
	    app->selector, app->protocol);
	for (i = 0; i < nic->napps; i++)
		if (!memcmp(&nic->apps[i], app, sizeof(*app)))
			return;
	if (nic->napps < MAX_APPS)
		nic->apps[nic->napps++] = *app;
}

static void app_del(struct fake_nic *nic, const struct dcb_app *app)
{
	int i;

	say("%s: IEEE_DEL APP del priority=%u selector=%u protocol=%u", nic->ifname, app->priority,
	    app->selector, app->protocol);
	for (i = 0; i < nic->napps; i++) {
		if (!memcmp(&nic->apps[i], app, sizeof(*app))) {
			nic->apps[i] = nic->apps[--nic->napps];
			return;
		}
	}
}

/* Decodes the DCB_ATTR_IEEE nest of an IEEE_SET (del == 0) or IEEE_DEL (del == 1). */
static void decode_ieee(struct fake_nic *nic, struct nlattr *ieee, int del)
{
	FOR_ATTRS(a, ATTR_DATA(ieee), ATTR_LEN(ieee))
	{
		int type = ATTR_TYPE(a);

		if (type == DCB_ATTR_IEEE_ETS && ATTR_LEN(a) >= (int)sizeof(struct ieee_ets)) {
			struct ieee_ets e;
			char p[40], tx[40], rx[40], tsa[48], rp[40], rbw[40], rtsa[48];

			memcpy(&e, ATTR_DATA(a), sizeof(e));
			fmt8(p, sizeof(p), e.prio_tc);
			fmt8(tx, sizeof(tx), e.tc_tx_bw);
			fmt8(rx, sizeof(rx), e.tc_rx_bw);
			fmt8(tsa, sizeof(tsa), e.tc_tsa);
			fmt8(rp, sizeof(rp), e.reco_prio_tc);
			fmt8(rbw, sizeof(rbw), e.tc_reco_bw);
			fmt8(rtsa, sizeof(rtsa), e.tc_reco_tsa);
			say("%s: %s ETS willing=%u ets_cap=%u cbs=%u prio_tc=%s tc_tx_bw=%s "
			    "tc_rx_bw=%s tc_tsa=%s reco_prio_tc=%s tc_reco_bw=%s tc_reco_tsa=%s",
			    nic->ifname, del ? "IEEE_DEL" : "IEEE_SET", e.willing, e.ets_cap, e.cbs,
			    p, tx, rx, tsa, rp, rbw, rtsa);
			if (!del) {
				e.ets_cap = IEEE_8021QAZ_MAX_TCS;
				nic->ets = e;
			}
		} else if (type == DCB_ATTR_IEEE_PFC &&
			   ATTR_LEN(a) >= (int)sizeof(struct ieee_pfc)) {
			struct ieee_pfc f;

			memcpy(&f, ATTR_DATA(a), sizeof(f));
			say("%s: %s PFC pfc_cap=%u pfc_en=0x%02x mbc=%u delay=%u", nic->ifname,
			    del ? "IEEE_DEL" : "IEEE_SET", f.pfc_cap, f.pfc_en, f.mbc, f.delay);
			if (!del) {
				f.pfc_cap = IEEE_8021QAZ_MAX_TCS;
				memset(f.requests, 0, sizeof(f.requests));
				memset(f.indications, 0, sizeof(f.indications));
				nic->pfc = f;
			}
		} else if (type == DCB_ATTR_IEEE_APP_TABLE) {
			FOR_ATTRS(e, ATTR_DATA(a), ATTR_LEN(a))
			{
				struct dcb_app app;

				if (ATTR_TYPE(e) != DCB_ATTR_IEEE_APP ||
				    ATTR_LEN(e) < (int)sizeof(app))
					continue;
				memcpy(&app, ATTR_DATA(e), sizeof(app));
				if (del)
					app_del(nic, &app);
				else
					app_add(nic, &app);
			}
		} else if (debug) {
			say("%s: %s attribute %d ignored", nic->ifname, del ? "IEEE_DEL" : "IEEE_SET",
			    type);
		}
	}
}

/* Looks at an outgoing request; returns the fake NIC it concerns, or NULL. */
static struct fake_nic *note_request(const struct nlmsghdr *h, int *cmd)
{
	const struct dcbmsg *d;
	struct fake_nic *nic = NULL;
	struct nlattr *ieee = NULL;
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct dcbmsg));

	if (!h || (h->nlmsg_type != RTM_GETDCB && h->nlmsg_type != RTM_SETDCB) ||
	    h->nlmsg_len < hdr)
		return NULL;
	d = NLMSG_DATA(h);
	*cmd = d->cmd;
	FOR_ATTRS(a, (char *)h + hdr, h->nlmsg_len - hdr)
	{
		if (ATTR_TYPE(a) == DCB_ATTR_IFNAME)
			nic = find_nic(ATTR_DATA(a), ATTR_LEN(a));
		else if (ATTR_TYPE(a) == DCB_ATTR_IEEE)
			ieee = a;
	}
	if (!nic)
		return NULL;
	if (d->cmd == DCB_CMD_IEEE_SET || d->cmd == DCB_CMD_IEEE_DEL) {
		if (ieee)
			decode_ieee(nic, ieee, d->cmd == DCB_CMD_IEEE_DEL);
	} else if (debug && d->cmd != DCB_CMD_GDCBX && d->cmd != DCB_CMD_IEEE_GET) {
		say("%s: cmd %d not faked", nic->ifname, d->cmd);
	}
	return nic;
}

/* Appends an attribute at *at (inside buf of size cap); returns it or NULL. */
static struct nlattr *put_attr(char *buf, size_t cap, size_t *at, int type, const void *data,
			       size_t len)
{
	struct nlattr *a;

	if (*at + NLA_HDRLEN + NLA_ALIGN(len) > cap)
		return NULL;
	a = (struct nlattr *)(buf + *at);
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(ATTR_DATA(a), data, len);
	memset((char *)ATTR_DATA(a) + len, 0, NLA_ALIGN(len) - len);
	*at += NLA_HDRLEN + NLA_ALIGN(len);
	return a;
}

/* Builds the synthetic answer to GDCBX or IEEE_GET; returns its length, 0 when none. */
static size_t build_reply(char *buf, size_t cap, const struct pending *p, uint32_t pid)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct dcbmsg *d;
	size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*d));
	struct fake_nic *nic = p->nic;

	if (cap < at)
		return 0;
	memset(buf, 0, at);
	h->nlmsg_type = RTM_GETDCB;
	h->nlmsg_seq = p->seq;
	h->nlmsg_pid = pid;
	d = NLMSG_DATA(h);
	d->dcb_family = AF_UNSPEC;
	d->cmd = p->cmd;
	if (!put_attr(buf, cap, &at, DCB_ATTR_IFNAME, nic->ifname, strlen(nic->ifname) + 1))
		return 0;
	if (p->cmd == DCB_CMD_GDCBX) {
		uint8_t mode = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;

		if (!put_attr(buf, cap, &at, DCB_ATTR_DCBX, &mode, 1))
			return 0;
		if (debug)
			say("%s: GDCBX -> 0x%02x", nic->ifname, mode);
	} else if (p->cmd == DCB_CMD_IEEE_GET) {
		struct nlattr *ieee, *table;
		size_t start, tstart;
		int i;

		/* lldpad's parser reuses one remainder counter for the nested APP table, so the
		 * table must come last (as the kernel's dcbnl_ieee_fill() puts it). */
		start = at;
		ieee = put_attr(buf, cap, &at, DCB_ATTR_IEEE | NLA_F_NESTED, NULL, 0);
		if (!ieee || !put_attr(buf, cap, &at, DCB_ATTR_IEEE_ETS, &nic->ets, sizeof(nic->ets)) ||
		    !put_attr(buf, cap, &at, DCB_ATTR_IEEE_PFC, &nic->pfc, sizeof(nic->pfc)))
			return 0;
		tstart = at;
		table = put_attr(buf, cap, &at, DCB_ATTR_IEEE_APP_TABLE | NLA_F_NESTED, NULL, 0);
		if (!table)
			return 0;
		for (i = 0; i < nic->napps; i++)
			if (!put_attr(buf, cap, &at, DCB_ATTR_IEEE_APP, &nic->apps[i],
				      sizeof(nic->apps[i])))
				return 0;
		table->nla_len = at - tstart;
		ieee->nla_len = at - start;
		{
			uint8_t mode = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;

			if (!put_attr(buf, cap, &at, DCB_ATTR_DCBX, &mode, 1))
				return 0;
		}
		if (debug)
			say("%s: IEEE_GET -> ets_cap=%u pfc_cap=%u apps=%d", nic->ifname,
			    nic->ets.ets_cap, nic->pfc.pfc_cap, nic->napps);
	} else {
		return 0;
	}
	h->nlmsg_len = at;
	return at;
}

int nl_send_auto_complete(struct nl_sock *sk, struct nl_msg *msg)
{
	static int (*real)(struct nl_sock *, struct nl_msg *);
	static struct nlmsghdr *(*hdr_of)(struct nl_msg *);
	struct fake_nic *nic = NULL;
	struct pending *p;
	int ret, cmd = 0;

	load_config();
	if (!real)
		real = (int (*)(struct nl_sock *, struct nl_msg *))dlsym(RTLD_NEXT,
									 "nl_send_auto_complete");
	if (!hdr_of)
		hdr_of = (struct nlmsghdr * (*)(struct nl_msg *)) dlsym(RTLD_DEFAULT, "nlmsg_hdr");
	if (!real)
		return -1;
	ret = real(sk, msg); /* completes the header: the sequence number is known after it */
	if (hdr_of && nnics > 0)
		nic = note_request(hdr_of(msg), &cmd);
	p = pending_for(sk, nic != NULL);
	if (p) {
		if (nic && ret > 0 && (cmd == DCB_CMD_GDCBX || cmd == DCB_CMD_IEEE_GET)) {
			p->cmd = cmd;
			p->seq = hdr_of(msg)->nlmsg_seq;
			p->nic = nic;
		} else {
			p->nic = NULL; /* nothing to fake for the next answer on this socket */
		}
	}
	return ret;
}

int nl_recv(struct nl_sock *sk, struct sockaddr_nl *nla, unsigned char **buf,
	    struct ucred **creds)
{
	static int (*real)(struct nl_sock *, struct sockaddr_nl *, unsigned char **,
			   struct ucred **);
	struct pending *p;
	struct nlmsghdr *h;
	char *reply;
	size_t len;
	int ret;

	load_config();
	if (!real)
		real = (int (*)(struct nl_sock *, struct sockaddr_nl *, unsigned char **,
				struct ucred **))dlsym(RTLD_NEXT, "nl_recv");
	if (!real)
		return -1;
	ret = real(sk, nla, buf, creds);
	p = pending_for(sk, 0);
	if (!p || !p->nic || ret < (int)NLMSG_HDRLEN || !buf || !*buf)
		return ret;
	h = (struct nlmsghdr *)*buf;
	if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq != p->seq)
		return ret; /* a real answer (or not ours): leave it */
	reply = malloc(4096); /* lldpad free()s the buffer nl_recv returns */
	if (!reply)
		return ret;
	len = build_reply(reply, 4096, p, h->nlmsg_pid);
	p->nic = NULL;
	if (!len) {
		free(reply);
		return ret;
	}
	free(*buf);
	*buf = (unsigned char *)reply;
	return (int)len;
}
