/*
 * caps.c - down to CAP_NET_ADMIN (see caps.h).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/caps.h"

int caps_keep_net_admin(int *ret_kept)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	bool setpcap;
	int kept = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	setpcap = data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP);
	/* Up to the running kernel's last capability, which may be newer than ours. */
	for (int cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r < 0 && errno == EINVAL)
			break;
		if (r < 0)
			return -errno;
		if (r == 0 || cap == CAP_NET_ADMIN)
			continue;
		if (!setpcap) {
			kept++;
			continue;
		}
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return -errno;
	}
	memset(data, 0, sizeof(data));
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective = CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted = CAP_TO_MASK(CAP_NET_ADMIN);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	/* capset() already emptied the ambient set (it cannot exceed inheritable). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	*ret_kept = kept;
	return 0;
}
