//! Whom a capture trusts: the rules, written once, by which the collector
//! and the interposer decide whether a folder they write into (the capture
//! folder, the dump folder, the staging folder) and a staged file they take
//! in belong to the user who runs xpu-asm. docs/limits.md ("Security")
//! gives the threat model.
//!
//! A folder is the user's when it is a folder (not a link to one), the
//! user owns it, and nobody else can write into it: neither other users
//! (`o+w`) nor its group (`g+w`), unless that group is the user's own
//! private group, whose only member is the user (as OpenSSH's
//! `StrictModes` reads `~/.ssh` on systems with user-private groups).
//! A file taken in is the user's when it is a regular file the user owns,
//! with one link (a hard link to someone's file is not theirs to give).

/// The staging folder of user `uid` under the staging filesystem `base`
/// (`XPU_ASM_STAGING`, default `/dev/shm`): `<base>/xpu-asm-<uid>`, made
/// 0700 by the first xpu-asm process of that user on the node.
pub fn user_staging_folder(base: &str, uid: u32) -> String {
    format!("{}/xpu-asm-{uid}", base.trim_end_matches('/'))
}

/// What a folder's `lstat` says, for [`folder_verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderStat {
    pub is_link: bool,
    pub is_dir: bool,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

/// Why a folder is not the user's, as a phrase that follows its path
/// ("is a symbolic link", "is owned by uid 1001", ...); `None`: it is.
/// `private_group(gid)` tells whether group `gid` is the user's private
/// group (the user its only member).
pub fn folder_verdict(
    st: FolderStat,
    me: u32,
    private_group: impl Fn(u32) -> bool,
) -> Option<String> {
    if st.is_link {
        return Some("is a symbolic link".into());
    }
    if !st.is_dir {
        return Some("is not a folder".into());
    }
    if st.uid != me {
        return Some(format!("is owned by uid {}, not by you (uid {me})", st.uid));
    }
    if st.mode & 0o002 != 0 {
        return Some(format!(
            "can be written by every user (mode {:04o})",
            st.mode & 0o7777
        ));
    }
    if st.mode & 0o020 != 0 && !private_group(st.gid) {
        return Some(format!(
            "can be written by the members of group {} (mode {:04o})",
            st.gid,
            st.mode & 0o7777
        ));
    }
    None
}

/// What a file's `fstat` says, for [`file_verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub is_regular: bool,
    pub uid: u32,
    pub nlink: u64,
}

/// Why a file is not the user's to take in, as a phrase that follows its
/// path; `None`: it is.
pub fn file_verdict(st: FileStat, me: u32) -> Option<String> {
    if !st.is_regular {
        return Some("is not a regular file".into());
    }
    if st.uid != me {
        return Some(format!("is owned by uid {}, not by you (uid {me})", st.uid));
    }
    if st.nlink != 1 {
        return Some(format!(
            "has {} links (a hard link to another file)",
            st.nlink
        ));
    }
    None
}

/// Whether a folder above a capture or staging folder leaves it safe:
/// anyone who can write a folder can rename what it holds, so a folder
/// every user can write must have the sticky bit (`/tmp`, `/dev/shm`).
/// A folder its group can write (a project's shared folder) is trusted to
/// that group (docs/limits.md). `None`: safe; else why not.
pub fn parent_verdict(st: FolderStat) -> Option<String> {
    let sticky = st.mode & 0o1000 != 0;
    (st.mode & 0o002 != 0 && !sticky).then(|| {
        format!(
            "can be written by every user and has no sticky bit (mode {:04o}): anyone can rename what it holds",
            st.mode & 0o7777
        )
    })
}

/// Whether group `gid` is the private group of user `uid`: the group
/// whose only member is that user (its primary group with no other
/// members listed, or listing only the user).
pub fn is_private_group(gid: u32, uid: u32) -> bool {
    // SAFETY: getpwuid_r/getgrgid_r write only into the buffers given,
    // whose lengths they are told; the results point into those buffers.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut pw_out: *mut libc::passwd = std::ptr::null_mut();
        let mut pw_buf = vec![0 as libc::c_char; 16384];
        if libc::getpwuid_r(uid, &mut pw, pw_buf.as_mut_ptr(), pw_buf.len(), &mut pw_out) != 0
            || pw_out.is_null()
        {
            return false;
        }
        let user = std::ffi::CStr::from_ptr(pw.pw_name).to_bytes().to_vec();
        let mut gr: libc::group = std::mem::zeroed();
        let mut gr_out: *mut libc::group = std::ptr::null_mut();
        let mut gr_buf = vec![0 as libc::c_char; 65536];
        if libc::getgrgid_r(gid, &mut gr, gr_buf.as_mut_ptr(), gr_buf.len(), &mut gr_out) != 0
            || gr_out.is_null()
        {
            return false;
        }
        let mut members = Vec::new();
        let mut m = gr.gr_mem;
        while !m.is_null() && !(*m).is_null() {
            members.push(std::ffi::CStr::from_ptr(*m).to_bytes().to_vec());
            m = m.add(1);
        }
        let primary = pw.pw_gid == gid;
        let only_me = members.iter().all(|n| *n == user);
        // Another user whose primary group this is would be a member too.
        primary && only_me && no_other_primary(gid, uid)
    }
}

/// No other user of the password database has `gid` as primary group.
fn no_other_primary(gid: u32, uid: u32) -> bool {
    let Ok(passwd) = std::fs::read_to_string("/etc/passwd") else {
        return false;
    };
    !passwd.lines().any(|l| {
        let f: Vec<&str> = l.split(':').collect();
        f.len() > 3 && f[3].parse() == Ok(gid) && f[2].parse() != Ok(uid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(uid: u32, gid: u32, mode: u32) -> FolderStat {
        FolderStat {
            is_link: false,
            is_dir: true,
            uid,
            gid,
            mode,
        }
    }

    #[test]
    fn a_folder_is_the_users_when_only_they_can_write_it() {
        let never = |_| false;
        assert_eq!(folder_verdict(dir(5, 5, 0o700), 5, never), None);
        assert_eq!(folder_verdict(dir(5, 5, 0o755), 5, never), None);
        assert_eq!(
            folder_verdict(dir(6, 6, 0o700), 5, never).unwrap(),
            "is owned by uid 6, not by you (uid 5)"
        );
        assert_eq!(
            folder_verdict(dir(5, 5, 0o777), 5, never).unwrap(),
            "can be written by every user (mode 0777)"
        );
        assert_eq!(
            folder_verdict(dir(5, 9, 0o775), 5, never).unwrap(),
            "can be written by the members of group 9 (mode 0775)"
        );
        assert_eq!(folder_verdict(dir(5, 9, 0o775), 5, |g| g == 9), None);
        let link = FolderStat {
            is_link: true,
            ..dir(5, 5, 0o777)
        };
        assert_eq!(
            folder_verdict(link, 5, never).unwrap(),
            "is a symbolic link"
        );
    }

    #[test]
    fn a_file_is_the_users_when_they_own_its_only_link() {
        let f = |is_regular, uid, nlink| FileStat {
            is_regular,
            uid,
            nlink,
        };
        assert_eq!(file_verdict(f(true, 5, 1), 5), None);
        assert!(file_verdict(f(true, 6, 1), 5).unwrap().contains("uid 6"));
        assert!(file_verdict(f(true, 5, 2), 5).unwrap().contains("2 links"));
        assert!(file_verdict(f(false, 5, 1), 5).unwrap().contains("regular"));
    }

    #[test]
    fn a_shared_parent_needs_its_sticky_bit() {
        assert_eq!(parent_verdict(dir(0, 0, 0o1777)), None);
        assert_eq!(parent_verdict(dir(5, 5, 0o755)), None);
        assert_eq!(parent_verdict(dir(7, 7, 0o2775)), None);
        assert!(parent_verdict(dir(0, 0, 0o777)).is_some());
        assert_eq!(
            user_staging_folder("/dev/shm/", 1000),
            "/dev/shm/xpu-asm-1000"
        );
    }
}
